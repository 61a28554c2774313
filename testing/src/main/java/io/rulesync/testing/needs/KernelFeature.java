package io.rulesync.testing.needs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What a kernel is built with: no install of a package brings it, so needing it is a skip even under CI. */
public enum KernelFeature {
    /** IP Virtual Server, which IPVS mode programs (this project's machines have none). */
    IPVS("IPVS", "ip_vs", Path.of("/proc/net/ip_vs"));

    private final String label;
    private final String module;
    private final Path loadedMarker;

    KernelFeature(String label, String module, Path loadedMarker) {
        this.label = label;
        this.module = module;
        this.loadedMarker = loadedMarker;
    }

    String label() {
        return label;
    }

    /** Loaded, built in, or a module the kernel would load on first use (as {@code ipvsadm} makes it). */
    public boolean present() {
        if (Files.exists(loadedMarker) || Files.exists(Path.of("/sys/module", module))) {
            return true;
        }
        try {
            Path modules = Path.of("/lib/modules", Files.readString(Path.of("/proc/sys/kernel/osrelease")).strip());
            for (String list : List.of("modules.builtin", "modules.dep")) {
                Path f = modules.resolve(list);
                if (Files.isReadable(f) && Files.readAllLines(f).stream().anyMatch(l -> l.contains("/" + module + ".ko"))) {
                    return true;
                }
            }
            return false;
        } catch (IOException e) {
            return false;
        }
    }
}
