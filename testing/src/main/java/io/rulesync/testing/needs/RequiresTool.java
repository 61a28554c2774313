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
 * The test runs host programs: {@code @RequiresTool("ipvsadm")}, {@code @RequiresTool({"ipset", "ipvsadm"})}.
 * Where one is missing the test is skipped with {@code needs ipvsadm: apt-get install ipvsadm};
 * under {@code CI=true} it fails with that line instead ({@link Need}).
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NeedCondition.class)
@Tag(Tiers.KERNEL)
public @interface RequiresTool {
    /** Program names, as on the PATH. */
    String[] value();
}
