package io.rulesync.compiler.purity;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * The domain model, endpoint selection, both rule compilers, event folding and versioning are pure Java: no Spring, Kafka, JDBC, Flyway or fabric8
 * client. Adapters for those live elsewhere and depend on the core, never the other way round.
 */
class FrameworkPurityTest {
    static final String[] FRAMEWORKS = {
        "org.springframework..", "org.apache.kafka..", "java.sql..", "javax.sql..", "org.postgresql..",
        "org.flywaydb..", "io.fabric8..", "picocli..",
    };

    static ArchRule pureCore(String... packages) {
        return noClasses().that().resideInAnyPackage(packages)
                .should().dependOnClassesThat().resideInAnyPackage(FRAMEWORKS)
                .because("the core is tested and run without frameworks; adapters wrap it");
    }

    @Test
    void modelAndRuleCompilerImportNoFramework() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.rulesync.model", "io.rulesync.compiler.endpoints", "io.rulesync.compiler.iptables",
                        "io.rulesync.compiler.ipvs", "io.rulesync.compiler.cluster", "io.rulesync.compiler.fold", "io.rulesync.compiler.version",
                        "io.rulesync.compiler.eventlog", "io.rulesync.compiler.admission");
        pureCore("io.rulesync.model..", "io.rulesync.compiler.endpoints..", "io.rulesync.compiler.iptables..",
                "io.rulesync.compiler.ipvs..", "io.rulesync.compiler.cluster..", "io.rulesync.compiler.fold..",
                "io.rulesync.compiler.version..", "io.rulesync.compiler.eventlog..", "io.rulesync.compiler.admission..").check(classes);
    }

    /** The rule really catches a violation (the fixture below uses JDBC). */
    @Test
    void theRuleCatchesAFrameworkDependency() {
        JavaClasses fixture = new ClassFileImporter().importClasses(ImpureFixture.class);
        assertThatThrownBy(() -> pureCore("io.rulesync.compiler.purity..").check(fixture))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.sql.Connection");
    }

    static final class ImpureFixture {
        java.sql.Connection connection;
    }
}
