package io.rulesync.testing.needs;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Whether this machine lets tests build network namespaces and use iptables inside them. */
final class NetworkNamespaces {
    /** What building a namespace node and filling its tables takes (NetnsLab uses every one). */
    static final List<String> TOOLS = List.of(
            "ip",
            "iptables",
            "ip6tables",
            "iptables-restore",
            "ip6tables-restore",
            "iptables-save",
            "ip6tables-save",
            "sysctl",
            "sh");

    private static final String HOW = "run the tests as root on a Linux host (or a --privileged container)";

    private NetworkNamespaces() {}

    /** Why namespaces cannot be used here, or empty; assumes {@link #TOOLS} are installed. */
    static Optional<String> problem() {
        String os = System.getProperty("os.name", "");
        if (!os.toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return Optional.of("this is " + os + "; " + HOW);
        }
        String uid = effectiveUid();
        if (!uid.equals("0")) {
            return Optional.of("the effective uid is " + uid + "; " + HOW);
        }
        // Named like NetnsLab's namespaces, so that its reaper removes this one if the JVM is killed meanwhile.
        String ns = "rslab-" + ProcessHandle.current().pid() + "-needs";
        try {
            String add = run("ip", "netns", "add", ns);
            if (add != null) {
                return Optional.of("'ip netns add' fails (" + add + "); " + HOW);
            }
            // The lab's pod-to-pod paths are bridged and need br_netfilter; its every node has IPv6 addresses. Both are
            // kernel
            // settings a machine of this kind may lack, so they are checked here rather than found as a timeout later.
            if (!Files.exists(Path.of("/proc/net/if_inet6"))) {
                return Optional.of(
                        "IPv6 is disabled in this kernel (booted with ipv6.disable=1?); the lab's nodes are dual-stack");
            }
            String bridged = run("ip", "netns", "exec", ns, "sysctl", "-n", "net.bridge.bridge-nf-call-iptables");
            if (bridged != null) {
                return Optional.of("bridged traffic does not pass iptables (" + bridged + "); modprobe br_netfilter");
            }
            for (String iptables : List.of("iptables", "ip6tables")) {
                String inside = run("ip", "netns", "exec", ns, iptables, "-t", "nat", "-S");
                if (inside != null) {
                    return Optional.of(iptables + " fails inside a namespace (" + inside + ");"
                            + " load the nf_tables or ip_tables kernel modules");
                }
            }
            return Optional.empty();
        } finally {
            run("ip", "netns", "del", ns);
        }
    }

    private static String effectiveUid() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(l -> l.startsWith("Uid:"))
                    .map(l -> l.trim().split("\\s+")[2])
                    .findFirst()
                    .orElse("unknown");
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    /**
     * Runs a command; null when it succeeds, else its first line of output that is not modprobe's (iptables-legacy asks
     * it to load a module first, and what follows says why the tool failed), or why it did not start.
     */
    private static String run(String... command) {
        List<String> argv = new ArrayList<>(List.of(command));
        argv.set(0, Tools.find(command[0]).map(Path::toString).orElse(command[0]));
        try {
            Process p = new ProcessBuilder(argv)
                    .redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            int exit = p.waitFor();
            return exit == 0
                    ? null
                    : out.lines()
                            .filter(l -> !l.startsWith("modprobe: "))
                            .findFirst()
                            .or(() -> out.lines().findFirst())
                            .orElse("exit code " + exit);
        } catch (IOException e) {
            return e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
