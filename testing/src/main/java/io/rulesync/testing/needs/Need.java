package io.rulesync.testing.needs;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.opentest4j.AssertionFailedError;

/**
 * Something a test needs from the machine it runs on, checked: a host tool, network namespaces,
 * PostgreSQL, a kernel feature. When it is missing, {@link #message()} says in one line what is
 * needed and how to get it ({@code needs ipvsadm: apt-get install ipvsadm}).
 *
 * <p>The policy, in one place: a missing need skips the test, except under {@code CI=true}, where a
 * need that an install can bring fails it, so that CI proves every path. What the kernel is built
 * with cannot be installed ({@code installable == false}); such a need stays a skip even there.
 *
 * <p>Tests declare needs with the {@code @Requires...} annotations of this package. Helpers that
 * tests call from their bodies (a test database, a namespace lab) call {@link #require()}.
 *
 * @param what what is needed, e.g. {@code ipvsadm}, {@code network namespaces}
 * @param missing empty when present; otherwise why it is missing and how to get it
 * @param installable false for what no install brings (kernel features): never a CI failure
 */
public record Need(String what, Optional<String> missing, boolean installable) {
    /** Checks that cost a process or a connection run once per JVM; the machine does not change meanwhile. */
    private static final Map<String, Need> CHECKED = new ConcurrentHashMap<>();

    public boolean met() {
        return missing.isEmpty();
    }

    /** {@code needs WHAT: HOW TO GET IT}, one line. */
    public String message() {
        return "needs " + what + ": " + missing.orElse("present");
    }

    /** Whether a missing need fails rather than skips, given whether the run is CI's. */
    boolean fails(boolean ci) {
        return !met() && installable && ci;
    }

    /**
     * For helpers called from a test's body: returns when the need is met; otherwise skips the
     * calling test, or under {@code CI=true} fails it, with {@link #message()}.
     */
    public void require() {
        require(Ci.strict());
    }

    void require(boolean ci) {
        if (met()) {
            return;
        }
        if (fails(ci)) {
            throw new AssertionFailedError(message());
        }
        Assumptions.abort(message());
    }

    // ------------------------------------------------------------------------------------ the needs

    /** A program on the PATH (or in the sbin directories, which a non-root PATH may lack). */
    public static Need tool(String name) {
        return new Need(name, Tools.find(name).isPresent() ? Optional.empty() : Optional.of(Tools.install(name)), true);
    }

    /**
     * Root, the tools that build a namespace and fill its tables, a namespace that can be created,
     * and iptables working inside one. A missing tool is reported as that tool's need.
     */
    public static Need networkNamespaces() {
        return checked("netns", () -> {
            for (String tool : NetworkNamespaces.TOOLS) {
                Need t = tool(tool);
                if (!t.met()) {
                    return t;
                }
            }
            return new Need("network namespaces", NetworkNamespaces.problem(), true);
        });
    }

    /**
     * A PostgreSQL server to create test databases on: the local one, or one that Testcontainers
     * starts where Docker runs (as {@code TestInfrastructure} chooses).
     */
    public static Need postgres() {
        return LocalPostgres.containersWillServe() ? new Need("PostgreSQL", Optional.empty(), true) : localPostgres();
    }

    /** The local server itself, {@value LocalPostgres#ADDRESS}, user postgres without a password. */
    public static Need localPostgres() {
        return checked(
                "postgres",
                () -> new Need(
                        "PostgreSQL at " + LocalPostgres.ADDRESS + " (user postgres, trust)",
                        LocalPostgres.problem(),
                        true));
    }

    /**
     * The kernel lab: qemu, Debian's kernel package with its modules (IPVS among them) and a static busybox, from which
     * the lab builds the VM's root. All three install with apt.
     */
    public static Need kernelVm() {
        return checked("kernel-vm", () -> {
            String install = "apt-get install qemu-system-x86 linux-image-amd64 busybox-static";
            boolean qemu = Tools.find("qemu-system-x86_64").isPresent();
            boolean busybox = java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/busybox"));
            boolean kernel;
            try (var boot = java.nio.file.Files.list(java.nio.file.Path.of("/boot"))) {
                kernel = boot.map(p -> p.getFileName().toString())
                        .filter(n -> n.startsWith("vmlinuz-"))
                        .anyMatch(n -> java.nio.file.Files.isDirectory(java.nio.file.Path.of(
                                "/lib/modules", n.substring("vmlinuz-".length()), "kernel/net/netfilter/ipvs")));
            } catch (java.io.IOException e) {
                kernel = false;
            }
            return new Need(
                    "a kernel VM (qemu, a kernel package with IPVS modules, busybox)",
                    qemu && busybox && kernel ? Optional.empty() : Optional.of(install),
                    true);
        });
    }

    /** A kernel built with {@code feature}: no install brings it. */
    public static Need kernelWith(KernelFeature feature) {
        return new Need(
                "a kernel with " + feature.label(),
                feature.present() ? Optional.empty() : Optional.of("this kernel has none, and no install brings it"),
                false);
    }

    /** A kernel without {@code feature}, for tests of how the code copes with its absence. */
    public static Need kernelWithout(KernelFeature feature) {
        return new Need(
                "a kernel without " + feature.label(),
                feature.present() ? Optional.of("this kernel has it, and no install removes it") : Optional.empty(),
                false);
    }

    private static Need checked(String key, Supplier<Need> check) {
        return CHECKED.computeIfAbsent(key, k -> check.get());
    }
}
