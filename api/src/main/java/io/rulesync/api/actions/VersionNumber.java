package io.rulesync.api.actions;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A body field that names a version: a JSON whole number from 1, not a text holding one nor a
 * fraction. Null is valid (required is {@code @NotNull}'s to say). The message's {@code %s} is where
 * the problem handler quotes the refused value.
 */
@Documented
@Constraint(validatedBy = VersionNumber.Check.class)
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT})
@Retention(RetentionPolicy.RUNTIME)
public @interface VersionNumber {
    String message() default "'%s' is not a version number (a whole number from 1)";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Check implements ConstraintValidator<VersionNumber, Object> {
        @Override
        public boolean isValid(Object value, ConstraintValidatorContext context) {
            return value == null
                    || (value instanceof Integer || value instanceof Long) && ((Number) value).longValue() >= 1;
        }
    }
}
