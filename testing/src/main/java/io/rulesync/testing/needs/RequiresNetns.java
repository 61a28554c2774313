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
 * The test builds Linux network namespaces and runs iptables in them: root, iproute2, iptables and
 * procps, and a kernel that allows it ({@link Need#networkNamespaces()}). Skipped where missing,
 * failed under {@code CI=true}. Tests that create namespaces delete them (NetnsLab does).
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NeedCondition.class)
@Tag(Tiers.KERNEL)
public @interface RequiresNetns {}
