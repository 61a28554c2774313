package io.rulesync.compiler.sim;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

/**
 * The seeded simulation of the compiler's partition processing ({@link CompilerSimulation}): thousands of seeds, each a
 * different interleaving of changes, crashes, lost commits, redelivery, rebalances with zombie writers, clock jumps and
 * operator actions, with every invariant checked at the end. No Kafka, PostgreSQL or Spring: the processor is the real
 * one, its store {@link MemoryPartitionStore}.
 */
class CompilerSimulationTest {
    private static Level before;

    @BeforeAll
    static void quiet() {
        Logger l = (Logger) LoggerFactory.getLogger("io.rulesync");
        before = l.getLevel();
        CompilerSimulation.quiet();
    }

    @AfterAll
    static void loud() {
        ((Logger) LoggerFactory.getLogger("io.rulesync")).setLevel(before);
    }

    @Test
    void everyInvariantHoldsForThousandsOfSeeds() {
        CompilerSimulation.Sweep s = CompilerSimulation.sweep(1, 2_000, CompilerSimulation.STEPS);
        System.out.println(s);
        assertThat(s.failures()).isEmpty();
        // The faults were really injected, in numbers: a sweep that injects nothing proves nothing.
        assertThat(s.crashes()).isGreaterThan(1_000);
        assertThat(s.unknownCommits()).isGreaterThan(1_000);
        assertThat(s.fenced()).isGreaterThan(500);
        assertThat(s.versions()).isGreaterThan(20_000);
    }

    @Test
    void aSeedReplaysExactly() {
        CompilerSimulation.Result a = new CompilerSimulation(42).run(CompilerSimulation.STEPS);
        CompilerSimulation.Result b = new CompilerSimulation(42).run(CompilerSimulation.STEPS);
        assertThat(a).isEqualTo(b);
    }

    @ParameterizedTest
    @EnumSource(value = MemoryPartitionStore.Defect.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aStoreThatBreaksARuleIsFoundAndItsSeedNamed(MemoryPartitionStore.Defect defect) {
        CompilerSimulation.Sweep s = CompilerSimulation.sweep(1, 200, CompilerSimulation.STEPS, defect);
        assertThat(s.failures()).as(defect + " found").isNotEmpty();
        assertThat(s.failures().get(0)).containsPattern("^seed \\d+: ").contains("replay: faults/simulate seed ");
    }
}
