package io.rulesync.agent.purity;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.rulesync.agent.mode.ModeChoice;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.testing.purity.PureCode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent's package table (node-agent/README.md, "Packages") as rules: each package uses only the packages of
 * rulesync the table gives it, besides itself, the model and its nested packages. A new dependency is either
 * refused here or written into the table.
 */
class AgentPackagesTest {
    private static final String MODEL = "io.rulesync.model..";
    private static final String EXEC = "io.rulesync.exec..";

    /** Package, then the rulesync packages it may use (as in the README's table). */
    static final Map<String, List<String>> TABLE = Map.of(
            "io.rulesync.agent.mode",
                    List.of(
                            "io.rulesync.agent.apply..",
                            "io.rulesync.agent.ipvs..",
                            "io.rulesync.agent.nftables..",
                            "io.rulesync.agent.conntrack..",
                            "io.rulesync.agent.verify..",
                            "io.rulesync.agent.plan..",
                            "io.rulesync.agent.rules..",
                            EXEC),
            "io.rulesync.agent.apply", List.of("io.rulesync.agent.plan..", "io.rulesync.agent.rules..", EXEC),
            "io.rulesync.agent.ipvs",
                    List.of("io.rulesync.agent.apply..", "io.rulesync.agent.plan..", "io.rulesync.agent.rules..", EXEC),
            "io.rulesync.agent.nftables", List.of("io.rulesync.agent.plan..", EXEC),
            "io.rulesync.agent.conntrack", List.of("io.rulesync.agent.plan..", "io.rulesync.agent.rules..", EXEC),
            "io.rulesync.agent.verify", List.of("io.rulesync.agent.apply..", "io.rulesync.agent.plan.."),
            "io.rulesync.agent.feed", List.of("io.rulesync.client..", "io.rulesync.process.."),
            "io.rulesync.agent.state", List.of(),
            "io.rulesync.agent.metrics", List.of("io.rulesync.agent"),
            "io.rulesync.agent.cli",
                    List.of(
                            "io.rulesync.agent",
                            "io.rulesync.agent.mode..",
                            "io.rulesync.agent.metrics..",
                            "io.rulesync.agent.feed..",
                            "io.rulesync.client..",
                            "io.rulesync.process.."));

    static List<String> packages() {
        return new ArrayList<>(TABLE.keySet());
    }

    private static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.rulesync");

    private static JavaClasses agent() {
        return CLASSES;
    }

    @ParameterizedTest
    @MethodSource("packages")
    void eachPackageUsesWhatTheTableGivesIt(String pkg) {
        List<String> allowed = new ArrayList<>(TABLE.get(pkg));
        allowed.add(pkg + "..");
        allowed.add(MODEL);
        DescribedPredicate<JavaClass> others = resideInAPackage("io.rulesync..")
                .and(DescribedPredicate.not(resideInAnyPackage(allowed.toArray(String[]::new))))
                .as("rulesync packages other than " + String.join(", ", allowed));
        noClasses()
                .that()
                .resideInAPackage(pkg + "..")
                .should()
                .dependOnClassesThat(others)
                .because("node-agent/README.md's package table says what " + pkg + " may use")
                .check(agent());
    }

    /** The mode decision is pure, though its package holds the modes that drive the kernel. */
    @Test
    void theModeChoiceIsPure() {
        PureCode.forClasses(List.of(ModeChoice.class), List.of(ProxyMode.class), List.of())
                .check(agent());
    }
}
