package io.rulesync.testing.needs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Where a host tool is, and what brings it (a Debian package, or npm). */
final class Tools {
    /** Tools whose package has another name; any other tool's package is its own name. */
    private static final Map<String, String> PACKAGES = Map.ofEntries(
            Map.entry("ip", "iproute2"),
            Map.entry("iptables", "iptables"),
            Map.entry("ip6tables", "iptables"),
            Map.entry("iptables-restore", "iptables"),
            Map.entry("ip6tables-restore", "iptables"),
            Map.entry("iptables-save", "iptables"),
            Map.entry("ip6tables-save", "iptables"),
            Map.entry("ipvsadm-restore", "ipvsadm"),
            Map.entry("nft", "nftables"),
            Map.entry("sysctl", "procps"),
            Map.entry("pg_dump", "postgresql-client"),
            Map.entry("pg_restore", "postgresql-client"),
            Map.entry("sh", "dash"),
            Map.entry("chromedriver", "chromium-driver"),
            Map.entry("promtool", "prometheus"));
    /** A non-root PATH often lacks these, yet the tools in them run fine under {@code ip netns exec}. */
    private static final List<String> SBIN =
            List.of("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin");

    private Tools() {}

    static Optional<Path> find(String name) {
        List<String> dirs =
                new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(SBIN);
        return dirs.stream()
                .filter(d -> !d.isEmpty())
                .map(d -> Path.of(d, name))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /** Tools that come from npm, not from Debian, with the version the build is checked with. */
    private static final Map<String, String> NPM = Map.of("redocly", "@redocly/cli@2.77.0");

    static String debianPackage(String tool) {
        return PACKAGES.getOrDefault(tool, tool);
    }

    /** The one command that installs {@code tool}. */
    static String install(String tool) {
        return NPM.containsKey(tool) ? "npm install -g " + NPM.get(tool) : "apt-get install " + debianPackage(tool);
    }
}
