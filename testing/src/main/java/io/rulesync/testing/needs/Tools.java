package io.rulesync.testing.needs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Where a host tool is, and which Debian package brings it. */
final class Tools {
    /** Tools whose package has another name; any other tool's package is its own name. */
    private static final Map<String, String> PACKAGES = Map.of(
            "ip", "iproute2",
            "iptables", "iptables", "ip6tables", "iptables",
            "iptables-restore", "iptables", "ip6tables-restore", "iptables",
            "iptables-save", "iptables", "ip6tables-save", "iptables",
            "ipvsadm-restore", "ipvsadm",
            "sysctl", "procps",
            "sh", "dash");
    /** A non-root PATH often lacks these, yet the tools in them run fine under {@code ip netns exec}. */
    private static final List<String> SBIN = List.of("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin");

    private Tools() {
    }

    static Optional<Path> find(String name) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(SBIN);
        return dirs.stream().filter(d -> !d.isEmpty()).map(d -> Path.of(d, name)).filter(Files::isExecutable).findFirst();
    }

    static String debianPackage(String tool) {
        return PACKAGES.getOrDefault(tool, tool);
    }
}
