package io.rulesync.exec;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs host tools as processes of this host, their input from a file written in full beforehand, reading stdout and
 * stderr together, so that neither pipe can fill up and stall them.
 */
public final class HostCommand implements CommandRunner {
    /** Inputs in {@code java.io.tmpdir}: one is enough for the whole process. */
    public static final HostCommand PROCESSES = new HostCommand(null);

    /** Where inputs are written; null: {@code java.io.tmpdir}. */
    private final Path inputs;

    private HostCommand(Path inputs) {
        this.inputs = inputs;
    }

    /** Host commands whose inputs are written to {@code dir} instead of {@code java.io.tmpdir}. */
    public static HostCommand withInputsIn(Path dir) {
        return new HostCommand(dir);
    }

    @Override
    public Result run(List<String> cmd, String stdin, Duration timeout) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        // The agent reads the tools' messages ("No such service", "does not exist") and shows them to operators: in the
        // C
        // locale they are the same on every node, whatever its LANG would have translated glibc's errors into.
        pb.environment().put("LC_ALL", "C");
        Path input = null;
        if (stdin != null) {
            // The input is whole before the tool starts: piped, a caller killed mid-write would hand iptables-restore a
            // truncated script, and it commits each table at its COMMIT line, so one table could change without the
            // other. Unlinked once the tool has it open. It is written to java.io.tmpdir, which must be writable (the
            // agent's DaemonSet leaves its root filesystem writable; one made read-only needs an emptyDir at /tmp).
            input = inputs == null
                    ? Files.createTempFile("rulesync-input-", ".txt")
                    : Files.createTempFile(inputs, "rulesync-input-", ".txt");
            try {
                Files.writeString(input, stdin, StandardCharsets.UTF_8);
            } catch (IOException e) {
                Files.deleteIfExists(input); // a full temporary space keeps no half-written input of ours
                throw e;
            }
            pb.redirectInput(input.toFile());
        } else {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process p;
        try {
            p = pb.start();
        } finally {
            if (input != null) {
                Files.deleteIfExists(input);
            }
        }
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            return new Result(-1, "", String.join(" ", cmd) + " timed out after " + timeout.toSeconds() + " s");
        }
        return new Result(p.exitValue(), out.join(), err.join());
    }

    /** On its own thread: the common pool has one thread on 2 cores, and stdout and stderr must drain together. */
    private static CompletableFuture<String> drain(InputStream s) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try (s) {
                        f.complete(new String(s.readAllBytes(), StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        f.complete("");
                    }
                },
                "host-command-output");
        t.setDaemon(true);
        t.start();
        return f;
    }
}
