package io.rulesync.testing.needs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.container;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.skippedWithReason;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import io.rulesync.testing.tiers.EndToEnd;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.opentest4j.AssertionFailedError;

/**
 * The policy, run through JUnit itself: a missing need skips with its one line; under CI it fails
 * with the same line before the test's own set-up runs; a kernel feature stays a skip under CI.
 * {@code rulesync.ci} is set either way, so the machine's own CI variable changes nothing here.
 */
class NeedConditionTest {
    static final String NO_SUCH_TOOL = "rulesync-no-such-tool";
    static final String MISSING = "needs " + NO_SUCH_TOOL + ": apt-get install " + NO_SUCH_TOOL;
    static final AtomicInteger SET_UPS = new AtomicInteger();

    static class MissingToolOnAMethod {
        @BeforeEach
        void setUp() {
            SET_UPS.incrementAndGet();
        }

        @Test
        @RequiresTool(NO_SUCH_TOOL)
        void needsIt() {}

        @Test
        @RequiresTool("sh")
        void needsWhatIsThere() {}

        @Test
        void needsNothing() {}
    }

    @RequiresTool({"sh", NO_SUCH_TOOL})
    static class MissingToolOnTheClass {
        @BeforeAll
        static void setUp() {
            SET_UPS.incrementAndGet();
        }

        @Test
        void one() {}

        @Test
        void two() {}
    }

    /** Exactly one of the two kernel needs is missing on any machine. */
    static class KernelFeatures {
        @Test
        @RequiresKernelFeature(KernelFeature.IPVS)
        void withIpvs() {}

        @Test
        @RequiresKernelWithout(KernelFeature.IPVS)
        void withoutIpvs() {}

        @Test
        @RequiresKernelFeature(KernelFeature.IPVS)
        @RequiresKernelWithout(KernelFeature.IPVS)
        @RequiresTool(NO_SUCH_TOOL)
        void aKernelFeatureOutranksAMissingTool() {}
    }

    @RequiresNetns
    @RequiresTool("ipvsadm")
    @RequiresKernelFeature(KernelFeature.IPVS)
    static class KernelTier {
        @Test
        void t() {}
    }

    @RequiresPostgres
    static class IntegrationTier {
        @Test
        void t() {}

        @Test
        @RequiresKafka
        void kafka() {}
    }

    @EndToEnd
    @RequiresKafka
    static class EndToEndTier {
        @Test
        void t() {}
    }

    private static EngineExecutionResults run(Class<?> testClass, boolean ci) {
        return EngineTestKit.engine("junit-jupiter")
                .configurationParameter(Ci.PARAMETER, String.valueOf(ci))
                .selectors(selectClass(testClass))
                .execute();
    }

    @Test
    void aMissingToolSkipsTheTestWithOneLineSayingHowToGetIt() {
        SET_UPS.set(0);
        EngineExecutionResults results = run(MissingToolOnAMethod.class, false);
        results.allEvents().assertThatEvents().haveExactly(1, event(test("needsIt"), skippedWithReason(MISSING)));
        assertThat(results.testEvents().succeeded().count()).isEqualTo(2);
        assertThat(SET_UPS).hasValue(2);
    }

    @Test
    void underCiAMissingToolFailsTheTestWithTheSameLineBeforeItsSetUp() {
        SET_UPS.set(0);
        EngineExecutionResults results = run(MissingToolOnAMethod.class, true);
        results.allEvents()
                .assertThatEvents()
                .haveExactly(
                        1,
                        event(
                                test("needsIt"),
                                finishedWithFailure(instanceOf(AssertionFailedError.class), message(MISSING))));
        assertThat(results.allEvents().skipped().count()).isZero();
        assertThat(results.testEvents().succeeded().count()).isEqualTo(2);
        assertThat(SET_UPS)
                .as("set-up of the two tests that have what they need")
                .hasValue(2);
    }

    @Test
    void aClassThatNeedsAMissingToolIsSkippedWholeOrUnderCiFailsBeforeItsBeforeAll() {
        SET_UPS.set(0);
        run(MissingToolOnTheClass.class, false)
                .allEvents()
                .assertThatEvents()
                .haveExactly(1, event(container(MissingToolOnTheClass.class), skippedWithReason(MISSING)));
        EngineExecutionResults ci = run(MissingToolOnTheClass.class, true);
        ci.allEvents()
                .assertThatEvents()
                .haveExactly(
                        1,
                        event(
                                container(MissingToolOnTheClass.class),
                                finishedWithFailure(instanceOf(AssertionFailedError.class), message(MISSING))));
        assertThat(ci.testEvents().started().count()).isZero();
        assertThat(SET_UPS).hasValue(0);
    }

    @Test
    void aMissingKernelFeatureIsASkipEvenUnderCi() {
        EngineExecutionResults results = run(KernelFeatures.class, true);
        assertThat(results.allEvents().failed().count()).isZero();
        assertThat(results.testEvents().succeeded().count()).isEqualTo(1);
        String missing = KernelFeature.IPVS.present()
                ? "needs a kernel without IPVS: this kernel has it, and no install removes it"
                : "needs a kernel with IPVS: this kernel has none, and no install brings it";
        results.allEvents().assertThatEvents().haveExactly(2, event(test(), skippedWithReason(missing)));
    }

    @Test
    void theAnnotationsPlaceTestsInTheirTiers() {
        TestPlan plan = LauncherFactory.create()
                .discover(LauncherDiscoveryRequestBuilder.request()
                        .selectors(
                                selectClass(KernelTier.class),
                                selectClass(IntegrationTier.class),
                                selectClass(EndToEndTier.class))
                        .build());
        assertThat(tags(plan, "KernelTier")).containsExactly("kernel");
        assertThat(tags(plan, "IntegrationTier")).containsExactly("integration");
        assertThat(tags(plan, "EndToEndTier")).containsExactlyInAnyOrder("e2e", "integration");
    }

    private static List<String> tags(TestPlan plan, String className) {
        return plan.getRoots().stream()
                .flatMap(r -> plan.getChildren(r).stream())
                .filter(c -> c.getDisplayName().endsWith(className))
                .findFirst()
                .map(TestIdentifier::getTags)
                .orElseThrow()
                .stream()
                .map(t -> t.getName())
                .toList();
    }
}
