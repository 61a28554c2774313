package io.rulesync.testing.tiers;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test of the whole pipeline (tag {@value Tiers#E2E}). It still declares what it needs
 * ({@code @RequiresPostgres}, {@code @RequiresNetns}, ...), which adds those tiers' tags too.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag(Tiers.E2E)
public @interface EndToEnd {}
