package io.rulesync.compiler.purity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.rulesync.testing.purity.PureCode;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The domain model, endpoint selection, both rule compilers, event folding and versioning are pure Java: only
 * the JDK's pure parts, pcollections and snakeyaml-engine (see {@link PureCode}); no framework, file, network or
 * process. Adapters for those live elsewhere and depend on the core, never the other way round; the model's own
 * file readers are in {@code io.rulesync.model.files}, which the rule excludes.
 */
class PureCoreTest {
    static final List<String> ADAPTERS = List.of("io.rulesync.model.files..");
    private static final JavaClasses COMPILER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.rulesync.model", "io.rulesync.compiler");

    /**
     * The model and every package of the compiler-core module, found in the classes rather than listed: a package
     * added to the module is held to the rule without anyone remembering to add it here.
     */
    static List<String> core() {
        Set<String> packages = new TreeSet<>();
        packages.add("io.rulesync.model..");
        for (JavaClass c : COMPILER) {
            boolean inCore = c.getSource()
                    .map(src -> src.getUri().toString().contains("compiler-core"))
                    .orElse(false);
            if (inCore) {
                packages.add(c.getPackageName() + "..");
            }
        }
        return List.copyOf(packages);
    }

    @Test
    void theCorePackagesAreFoundInTheModule() {
        assertThat(core())
                .contains(
                        "io.rulesync.model..",
                        "io.rulesync.compiler.iptables..",
                        "io.rulesync.compiler.nftables..",
                        "io.rulesync.compiler.fold..")
                .doesNotContain("io.rulesync.compiler.runtime..");
    }

    @Test
    void modelAndRuleCompilerUseOnlyPureCode() {
        PureCode.rule(core(), List.of(), ADAPTERS).check(COMPILER);
    }

    /** The rule really catches violations: the fixture below uses JDBC, files, the network and a process. */
    @Test
    void theRuleCatchesAFrameworkFilesTheNetworkAndProcesses() {
        JavaClasses fixture = new ClassFileImporter().importClasses(ImpureFixture.class);
        assertThatThrownBy(() -> PureCode.rule(List.of("io.rulesync.compiler.purity.."), List.of(), List.of())
                        .check(fixture))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.sql.Connection")
                .hasMessageContaining("java.io.File")
                .hasMessageContaining("java.io.FileInputStream")
                .hasMessageContaining("java.nio.file.Path")
                .hasMessageContaining("java.net.Socket")
                .hasMessageContaining("java.lang.ProcessBuilder")
                .hasMessageContaining("java.lang.Runtime");
    }

    /**
     * Inside the allowed JDK trees the rule still refuses threads, executors, locks, logging, reflection and reading
     * the environment or system properties; concurrent collections and atomics stay allowed, as data.
     */
    @Test
    void theRuleCatchesThreadsExecutorsLoggingReflectionAndTheEnvironment() {
        JavaClasses fixture = new ClassFileImporter().importClasses(RunsAndLooksUpFixture.class);
        assertThatThrownBy(() -> PureCode.rule(List.of("io.rulesync.compiler.purity.."), List.of(), List.of())
                        .check(fixture))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.lang.Thread")
                .hasMessageContaining("java.util.concurrent.ExecutorService")
                .hasMessageContaining("java.util.concurrent.Executors")
                .hasMessageContaining("java.util.concurrent.locks.ReentrantLock")
                .hasMessageContaining("java.util.logging.Logger")
                .hasMessageContaining("java.lang.reflect.Method")
                .hasMessageContaining("java.lang.Class.forName")
                .hasMessageContaining("java.lang.System.getenv")
                .hasMessageContaining("java.lang.System.getProperty")
                .hasMessageNotContaining("java.util.concurrent.ConcurrentHashMap")
                .hasMessageNotContaining("java.util.concurrent.atomic.AtomicLong");
    }

    /** Concurrent collections and atomics are data: pure code may hold them. */
    @Test
    void concurrentCollectionsAndAtomicsArePure() {
        PureCode.rule(List.of("io.rulesync.compiler.purity.."), List.of(), List.of())
                .check(new ClassFileImporter().importClasses(PureConcurrentData.class));
    }

    /** A pure package that uses an adapter package the rule excludes is flagged too. */
    @Test
    void theRuleCatchesAnExcludedAdapter() {
        JavaClasses fixture = new ClassFileImporter().importClasses(UsesAnAdapter.class);
        assertThatThrownBy(() -> PureCode.rule(
                                List.of("io.rulesync.compiler.purity.."), List.of("io.rulesync.model.."), ADAPTERS)
                        .check(fixture))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.rulesync.model.files.KafkaClientConfig");
    }

    static final class ImpureFixture {
        java.sql.Connection connection;
        java.io.File file;
        java.nio.file.Path path;
        java.net.Socket socket;

        Object read() throws java.io.IOException {
            return new java.io.FileInputStream(file);
        }

        Object run() throws java.io.IOException {
            Runtime.getRuntime().exec(new String[] {"true"});
            return new ProcessBuilder("true").start();
        }
    }

    static final class RunsAndLooksUpFixture {
        java.util.concurrent.ConcurrentHashMap<String, Long> counts = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();

        void start() {
            new Thread(() -> {}).start();
        }

        void submit() {
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
            pool.shutdown();
        }

        void lock() {
            new java.util.concurrent.locks.ReentrantLock().lock();
        }

        void log() {
            java.util.logging.Logger.getLogger("pure").info("hello");
        }

        Object reflect() throws Exception {
            java.lang.reflect.Method m = Class.forName("java.lang.String").getMethod("length");
            return m.invoke("pure");
        }

        String settings() {
            return System.getenv("HOME") + System.getProperty("user.home");
        }
    }

    static final class PureConcurrentData {
        java.util.concurrent.ConcurrentMap<String, Long> counts = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();

        long add(String key) {
            counts.merge(key, 1L, Long::sum);
            return total.incrementAndGet();
        }
    }

    static final class UsesAnAdapter {
        Object settings() {
            return io.rulesync.model.files.KafkaClientConfig.load("");
        }
    }
}
