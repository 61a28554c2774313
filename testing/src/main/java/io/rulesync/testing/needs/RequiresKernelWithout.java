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
 * The test is about how the code copes where the kernel lacks {@code value} (say, IPVS mode falling
 * back to iptables mode). Where the kernel has it the test is skipped, also under {@code CI=true}.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NeedCondition.class)
@Tag(Tiers.KERNEL)
public @interface RequiresKernelWithout {
    KernelFeature value();
}
