package io.rulesync.testing.needs;

import static org.junit.platform.commons.support.AnnotationSupport.findAnnotation;

import java.lang.reflect.AnnotatedElement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.opentest4j.AssertionFailedError;

/**
 * Enforces the {@code @Requires...} annotations of the class or method it is evaluated for, with
 * {@link Need}'s policy: a missing need disables the test with the need's one-line message; under
 * {@code CI=true}, a need an install can bring instead lets the test start and fails it before any
 * of its own set-up runs ({@code @BeforeAll} for a class, {@code @BeforeEach} for a method).
 */
public final class NeedCondition implements ExecutionCondition, BeforeAllCallback, BeforeEachCallback {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<Need> missing = firstMissing(context);
        if (missing.isEmpty()) {
            return ConditionEvaluationResult.enabled("has what it needs");
        }
        if (missing.get().fails(Ci.strict(context))) {
            return ConditionEvaluationResult.enabled(
                    "CI=true, so this fails: " + missing.get().message());
        }
        return ConditionEvaluationResult.disabled(missing.get().message());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        failUnderCi(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        failUnderCi(context);
    }

    private static void failUnderCi(ExtensionContext context) {
        Optional<Need> missing = firstMissing(context);
        if (missing.isPresent() && missing.get().fails(Ci.strict(context))) {
            throw new AssertionFailedError(missing.get().message());
        }
    }

    /** The element's own needs (a method's, not its class's: the class was evaluated as a container). */
    private static Optional<Need> firstMissing(ExtensionContext context) {
        return context.getElement().stream()
                .flatMap(e -> needs(e).stream())
                .filter(n -> !n.met())
                .findFirst();
    }

    /**
     * What the element declares, kernel features first: where the kernel lacks what a test needs, the
     * test cannot run here whatever is installed, so that skip wins over a CI failure.
     */
    static List<Need> needs(AnnotatedElement element) {
        List<Need> needs = new ArrayList<>();
        findAnnotation(element, RequiresKernelFeature.class).ifPresent(a -> needs.add(Need.kernelWith(a.value())));
        findAnnotation(element, RequiresKernelWithout.class).ifPresent(a -> needs.add(Need.kernelWithout(a.value())));
        findAnnotation(element, RequiresTool.class)
                .ifPresent(a -> Arrays.stream(a.value()).map(Need::tool).forEach(needs::add));
        if (findAnnotation(element, RequiresNetns.class).isPresent()) {
            needs.add(Need.networkNamespaces());
        }
        if (findAnnotation(element, RequiresKernelVm.class).isPresent()) {
            needs.add(Need.kernelVm());
        }
        findAnnotation(element, RequiresPostgres.class)
                .ifPresent(a -> needs.add(a.local() ? Need.localPostgres() : Need.postgres()));
        return needs;
    }
}
