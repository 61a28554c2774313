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
 * The test boots the kernel lab (test-support's {@code KernelVm}): Debian's kernel under qemu, for what this host's
 * kernel lacks ({@link Need#kernelVm()}). Skipped where qemu, the kernel package or busybox are missing, failed under
 * {@code CI=true}, which installs them.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NeedCondition.class)
@Tag(Tiers.KERNEL)
public @interface RequiresKernelVm {}
