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
 * The test needs a kernel built with {@code value}, e.g. {@code @RequiresKernelFeature(KernelFeature.IPVS)}.
 * No install brings one, so where it is missing the test is skipped, also under {@code CI=true},
 * and the skip report names it.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NeedCondition.class)
@Tag(Tiers.KERNEL)
public @interface RequiresKernelFeature {
    KernelFeature value();
}
