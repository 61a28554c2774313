package io.rulesync.api.rollout;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.rulesync.testing.purity.PureCode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A rollout's next step is decided by a pure function ({@link RolloutStep}) of the rollout, its policy, the waves
 * and the nodes' reports, so that every rule of staged rollout is tested without a database, Spring or a clock;
 * {@link Rollouts} reads the world and carries the step out.
 */
class RolloutStepPurityTest {
    private static final JavaClasses ROLLOUT = new ClassFileImporter().importPackages("io.rulesync.api.rollout");

    @Test
    void theStepUsesOnlyTheValuesItDecidesFrom() {
        PureCode.forClasses(
                        List.of(RolloutStep.class),
                        List.of(Rollout.class, RolloutPolicy.class, Waves.class),
                        List.of("io.rulesync.model.."))
                .check(ROLLOUT);
    }

    /** The rule sees what the step uses: without its values allowed, it refuses them. */
    @Test
    void theRuleWouldRefuseAnythingElse() {
        assertThatThrownBy(() -> PureCode.forClasses(List.of(RolloutStep.class), List.of(), List.of())
                        .check(ROLLOUT))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.rulesync.api.rollout.Rollout")
                .hasMessageContaining("io.rulesync.model.cluster.KubernetesNames");
    }
}
