package io.rulesync.e2e.faults;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One role of {@code rulesync.jar} (compiler, api, agent) as a process of its own, as it is deployed: the fault
 * harnesses kill it, stop it and start it again. Its output is appended to {@code target/faults-NAME.log}.
 */
record RulesyncProcess(String name, Process process, String health, long startedAt) {

    /** A free TCP port of the loopback interface. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts {@code java JVM... -jar JAR ARGS...}; {@code health} is the URL that answers 200 with "UP" once it serves (null:
     * none to wait for).
     */
    static RulesyncProcess start(String name, Path jar, List<String> jvm, List<String> args, String health)
            throws IOException {
        List<String> cmd =
                new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        cmd.addAll(jvm);
        cmd.addAll(List.of("-jar", jar.toString()));
        cmd.addAll(args);
        Files.createDirectories(Path.of("target"));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        Path.of("target", "faults-" + name + ".log").toFile()))
                .start();
        return new RulesyncProcess(name, p, health, System.nanoTime());
    }

    /** Milliseconds from the start until its health URL says UP. */
    long awaitHealthy(Duration timeout) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = startedAt + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        name + " exited with " + process.exitValue() + " (see target/faults-" + name + ".log)");
            }
            try {
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create(health))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().contains("\"UP\"")) {
                    return (System.nanoTime() - startedAt) / 1_000_000;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(name + " was not healthy within " + timeout);
    }

    boolean alive() {
        return process.isAlive();
    }

    /**
     * SIGKILL to the process and every process it started, as a container's stop does when its grace period is over:
     * a tool it runs (an {@code iptables-restore}) dies with it instead of finishing its work.
     */
    void killAll() throws InterruptedException {
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        all.add(process.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : all) {
            h.onExit().join();
        }
        process.waitFor();
    }

    /** SIGKILL: no shutdown hook, no flush, no goodbye. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** SIGTERM, and wait for it to exit. */
    void stop() throws InterruptedException {
        process.destroy();
        process.waitFor();
    }
}
