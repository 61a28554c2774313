package io.rulesync.agent.purity;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.rulesync.testing.purity.PureCode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The agent's planning is pure: what iptables-restore input, ipvsadm commands and ipset changes a version
 * needs ({@code agent.plan}, {@code agent.plan.ipvs}, {@code agent.plan.nftables}), and its checks of what arrives
 * ({@code agent.rules}, over the model's rule grammar). It uses the model and the JDK's pure parts only (see {@link PureCode}), never the
 * kernel adapters ({@code agent.apply}, {@code agent.ipvs}, the {@code exec} module, ...) that run host commands.
 */
class PurePlannersTest {
    static final List<String> PLANNERS = List.of("io.rulesync.agent.plan..", "io.rulesync.agent.rules..");

    static ArchRule planners() {
        return PureCode.rule(PLANNERS, List.of("io.rulesync.model.."), List.of("io.rulesync.model.files.."));
    }

    @Test
    void thePlannersUseOnlyTheModelAndPureCode() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.rulesync.agent.plan", "io.rulesync.agent.rules");
        planners().check(classes);
    }

    /** The rule really catches violations: the fixture runs a host command, starts a process and reads a file. */
    @Test
    void theRuleCatchesHostCommandsProcessesAndFiles() {
        JavaClasses fixture = new ClassFileImporter().importClasses(ImpureFixture.class);
        assertThatThrownBy(() -> PureCode.rule(
                                List.of("io.rulesync.agent.purity.."), List.of("io.rulesync.model.."), List.of())
                        .check(fixture))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.rulesync.exec.HostCommand")
                .hasMessageContaining("java.lang.ProcessBuilder")
                .hasMessageContaining("java.nio.file.Files");
    }

    static final class ImpureFixture {
        Object adapter() {
            return io.rulesync.exec.HostCommand.class;
        }

        Object run() throws java.io.IOException {
            return new ProcessBuilder("iptables-save").start();
        }

        Object read() throws java.io.IOException {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/net/ip_vs"));
        }
    }
}
