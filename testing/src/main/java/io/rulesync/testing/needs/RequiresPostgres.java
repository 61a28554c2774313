package io.rulesync.testing.needs;

import io.rulesync.testing.tiers.Tiers;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The test creates databases on PostgreSQL: the local server at 127.0.0.1:5432 (user postgres,
 * trust authentication), or a Testcontainers one where Docker runs. Skipped where neither is there,
 * failed under {@code CI=true}.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NeedCondition.class)
@Tag(Tiers.INTEGRATION)
public @interface RequiresPostgres {
    /** The local server itself is needed (the demo's tests address it directly): a container will not do. */
    boolean local() default false;
}
