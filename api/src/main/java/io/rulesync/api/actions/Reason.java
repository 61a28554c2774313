package io.rulesync.api.actions;

import io.rulesync.model.event.ClusterEvent.OperatorAction;
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
 * An operator action's reason: a text the event can carry ({@link OperatorAction#checkReason} says
 * why not, and that is the message).
 */
@Documented
@Constraint(validatedBy = Reason.Check.class)
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT})
@Retention(RetentionPolicy.RUNTIME)
public @interface Reason {
    String message() default "must say why (a non-empty text)";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Check implements ConstraintValidator<Reason, Object> {
        @Override
        public boolean isValid(Object value, ConstraintValidatorContext context) {
            if (!(value instanceof String s)) {
                return false;
            }
            String problem = OperatorAction.checkReason(s);
            if (problem == null) {
                return true;
            }
            // The model's own words; they hold no '{' or '$', so nothing in them is interpolated.
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate(problem).addConstraintViolation();
            return false;
        }
    }
}
