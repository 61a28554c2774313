package io.rulesync.api.params;

import jakarta.validation.Constraint;
import jakarta.validation.OverridesAttribute;
import jakarta.validation.Payload;
import jakarta.validation.ReportAsSingleViolation;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Pattern;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A page size ({@code ?limit=}): 1 to {@link #max}, written without sign or leading zeros. The
 * message's {@code %s} is where the problem handler quotes the refused value.
 */
@Documented
@Constraint(validatedBy = {})
@ReportAsSingleViolation
@Pattern(regexp = "[1-9][0-9]{0,3}")
@Max(0)
@Target({ElementType.PARAMETER, ElementType.FIELD})
@Retention(RetentionPolicy.RUNTIME)
public @interface PageSize {
    @OverridesAttribute(constraint = Max.class, name = "value")
    long max();

    String message() default "'%s' is not 1-{max}";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
