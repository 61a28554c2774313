package io.rulesync.testing.needs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** What a kernel is built with: no install of a package brings it, so needing it is a skip even under CI. */
public enum KernelFeature {
    /** IP Virtual Server, which IPVS mode programs (this project's machines have none). */
    IPVS("IPVS", "ip_vs", Path.of("/proc/net/ip_vs"));

    private final String label;
    private final String module;
    private final Path loadedMarker;
    /** Asked once: loading a module is not free, and its answer does not change while the JVM runs. */
    private Boolean present;

    KernelFeature(String label, String module, Path loadedMarker) {
        this.label = label;
        this.module = module;
        this.loadedMarker = loadedMarker;
    }

    String label() {
        return label;
    }

    /**
     * Loaded, built in, or a module that loads here (as {@code ipvsadm} would load it on first use). A module merely listed
     * in the module directory is not enough: a container can see the host's {@code /lib/modules} and still not be allowed
     * to load from it, or lack {@code modprobe}; then the feature is missing, and the test that needs it skips rather than
     * fails. Asked once per JVM.
     */
    public synchronized boolean present() {
        if (present == null) {
            present = loaded() || builtIn() || (listed() && loads());
        }
        return present;
    }

    private boolean loaded() {
        return Files.exists(loadedMarker) || Files.exists(Path.of("/sys/module", module));
    }

    private boolean builtIn() {
        return moduleList("modules.builtin");
    }

    private boolean listed() {
        return moduleList("modules.dep");
    }

    private boolean moduleList(String list) {
        try {
            Path f = Path.of(
                    "/lib/modules",
                    Files.readString(Path.of("/proc/sys/kernel/osrelease")).strip(),
                    list);
            return Files.isReadable(f)
                    && Files.readAllLines(f).stream().anyMatch(l -> l.contains("/" + module + ".ko"));
        } catch (IOException e) {
            return false;
        }
    }

    private boolean loads() {
        try {
            Process p = new ProcessBuilder("modprobe", module)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 && loaded();
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
