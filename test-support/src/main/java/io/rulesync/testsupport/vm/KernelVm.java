package io.rulesync.testsupport.vm;

import io.rulesync.exec.CommandRunner;
import io.rulesync.testing.needs.Need;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kernel lab: Debian's kernel booted under qemu (KVM where the host has it, else software emulation) with a small
 * root the build makes ({@code vmlab/build}), for the kernels and tools this host lacks: here, IPVS. Commands run in
 * it through {@link #runner()}, a {@link CommandRunner} like the host's, so that the agent's own kernel adapters drive
 * the VM's kernel as they would a node's; {@code runner().inNetns(ns)} runs them in a namespace inside it.
 *
 * <p>The VM has no network but a port qemu forwards from the host's loopback to its command server; the tests' traffic
 * stays between namespaces inside it. It powers off on {@link #close()}, and with this JVM.
 */
public final class KernelVm implements AutoCloseable {
    private static final int SERVE_PORT = 7000;
    private static final Duration BOOT_LIMIT = Duration.ofMinutes(3);

    private final Process qemu;
    private final int port;
    private final Duration bootTime;
    private final Path console;

    private KernelVm(Process qemu, int port, Duration bootTime, Path console) {
        this.qemu = qemu;
        this.port = port;
        this.bootTime = bootTime;
        this.console = console;
    }

    private static KernelVm shared;

    /**
     * One VM for every test class of this JVM that needs the lab as it boots (each works in namespaces of its own):
     * booted at the first call, powered off when the JVM ends. Skips or fails the caller as {@link #boot()} does.
     */
    public static synchronized KernelVm shared() {
        Need.kernelVm().require();
        if (shared == null || !shared.qemu.isAlive()) {
            shared = boot();
        }
        return shared;
    }

    /**
     * Builds the lab's root if its inputs changed (cached otherwise), boots it and waits until it answers. Skips the
     * calling test (fails it under {@code CI=true}) where qemu or the kernel package are missing.
     */
    public static KernelVm boot() {
        return boot(List.of());
    }

    /**
     * The same, with more kernel arguments: {@code vmlab.without=ip_vs} boots a kernel whose modules lack {@code ip_vs}
     * (and what needs it), as a node where IPVS cannot be loaded.
     */
    public static KernelVm boot(List<String> kernelArguments) {
        Need.kernelVm().require();
        Path root = repositoryRoot();
        Path built = build(root);
        int port = freePort();
        Path console;
        try {
            console = Files.createTempFile("rulesync-vmlab-", ".console");
            console.toFile().deleteOnExit(); // a shared VM is never closed: its console goes with the JVM
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> cmd = new ArrayList<>(List.of(
                "qemu-system-x86_64",
                "-accel",
                Files.isWritable(Path.of("/dev/kvm")) ? "kvm" : "tcg",
                "-cpu",
                "max",
                "-m",
                "512",
                "-smp",
                "1",
                "-nographic",
                "-no-reboot",
                "-nodefaults",
                "-serial",
                "file:" + console,
                "-kernel",
                built.resolve("vmlinux").toString(),
                "-initrd",
                built.resolve("initramfs.gz").toString(),
                "-append",
                "console=ttyS0 quiet panic=-1 mitigations=off cryptomgr.notests i8042.noaux i8042.nokbd i8042.nopnp"
                        + " 8250.nr_uarts=1 no_timer_check tsc=reliable vmlab.serve=" + SERVE_PORT + " "
                        + String.join(" ", kernelArguments),
                // restrict=on: the VM reaches nothing outside; the forwarded port still reaches it.
                "-netdev",
                "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:" + port + "-10.0.2.15:" + SERVE_PORT,
                "-device",
                "virtio-net-pci,netdev=n0,romfile=")); // no boot ROM: the kernel is booted directly
        long start = System.nanoTime();
        Process qemu;
        try {
            qemu = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start qemu: " + e.getMessage(), e);
        }
        KernelVm vm = new KernelVm(qemu, port, null, console);
        Runtime.getRuntime().addShutdownHook(new Thread(qemu::destroyForcibly, "vmlab-off"));
        long deadline = start + BOOT_LIMIT.toNanos();
        while (true) {
            if (!qemu.isAlive()) {
                throw new IllegalStateException(
                        "the lab VM stopped while booting (exit " + qemu.exitValue() + "): " + vm.consoleTail());
            }
            try {
                if (vm.runner()
                        .run(List.of("true"), null, Duration.ofSeconds(10))
                        .ok()) {
                    break;
                }
            } catch (IOException e) {
                // not serving yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                qemu.destroyForcibly();
                throw new IllegalStateException("interrupted while the lab VM booted", e);
            }
            if (System.nanoTime() > deadline) {
                qemu.destroyForcibly();
                throw new IllegalStateException(
                        "the lab VM did not answer within " + BOOT_LIMIT + ": " + vm.consoleTail());
            }
            sleep(200);
        }
        return new KernelVm(qemu, port, Duration.ofNanos(System.nanoTime() - start), console);
    }

    /** From qemu's start to the first command answered. */
    public Duration bootTime() {
        return bootTime;
    }

    /** Runs commands in the VM (its root namespace), as the host's runner runs them on the host. */
    public CommandRunner runner() {
        return this::send;
    }

    /** Runs a bash script in the VM, failing with its output when it fails. */
    public String sh(String script) {
        CommandRunner.Result r;
        try {
            r = runner().run(List.of("bash", "-c", script), null, Duration.ofMinutes(2));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (!r.ok()) {
            throw new IllegalStateException(
                    "in the lab VM, exit " + r.exit() + ": " + script + "\n" + r.stdout() + r.stderr());
        }
        return r.stdout();
    }

    /**
     * The VM serves one connection at a time, and between two its server starts again: qemu takes a connection meanwhile
     * and resets it, before any command ran. Such a reset is tried again, for a few seconds.
     */
    private synchronized CommandRunner.Result send(List<String> argv, String stdin, Duration timeout)
            throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            try {
                return sendOnce(argv, stdin, timeout);
            } catch (NotServed e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("the lab VM does not take commands: " + e.getMessage(), e);
                }
                sleep(20);
            }
        }
    }

    /** The connection was reset, or ended, before the VM's server read anything of it. */
    private static final class NotServed extends IOException {
        NotServed(String message) {
            super(message);
        }
    }

    private CommandRunner.Result sendOnce(List<String> argv, String stdin, Duration timeout) throws IOException {
        Base64.Encoder b64 = Base64.getEncoder();
        long seconds = Math.max(1, (timeout.toMillis() + 999) / 1000);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, (seconds + 30) * 1000));
            OutputStream out = s.getOutputStream();
            StringBuilder request = new StringBuilder();
            request.append(seconds).append('\n');
            StringBuilder args = new StringBuilder();
            for (String a : argv) {
                args.append(a).append('\0');
            }
            request.append(b64.encodeToString(args.toString().getBytes(StandardCharsets.UTF_8)))
                    .append('\n');
            if (stdin != null) {
                request.append(b64.encodeToString(stdin.getBytes(StandardCharsets.UTF_8)));
            }
            try { // a reset can come while the request is written, too: nothing of it was read
                out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
                out.flush();
                s.shutdownOutput();
            } catch (java.net.SocketException e) {
                throw new NotServed(e.getMessage());
            }
            String all;
            try {
                all = readAll(s.getInputStream());
            } catch (java.net.SocketException e) {
                throw new NotServed(e.getMessage());
            }
            if (all.isEmpty()) {
                throw new NotServed("no answer");
            }
            String[] answer = all.split("\n", -1);
            if (answer.length < 3) {
                throw new IOException("the lab VM gave a partial answer to " + argv + ": " + all);
            }
            Base64.Decoder d = Base64.getDecoder();
            return new CommandRunner.Result(
                    Integer.parseInt(answer[0].strip()),
                    new String(d.decode(answer[1].strip()), StandardCharsets.UTF_8),
                    new String(d.decode(answer[2].strip()), StandardCharsets.UTF_8));
        }
    }

    /** Powers the VM off (it holds nothing to keep). */
    @Override
    public void close() {
        qemu.destroy();
        try {
            if (!qemu.waitFor(10, TimeUnit.SECONDS)) {
                qemu.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            qemu.destroyForcibly();
        }
        try {
            Files.deleteIfExists(console);
        } catch (IOException ignored) {
            // a temporary file
        }
    }

    private String consoleTail() {
        try {
            String all = Files.readString(console);
            return all.length() > 2000 ? all.substring(all.length() - 2000) : all;
        } catch (IOException e) {
            return "(no console: " + e.getMessage() + ")";
        }
    }

    private static Path build(Path root) {
        Process p;
        try {
            p = new ProcessBuilder(root.resolve("vmlab/build").toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            String out = readAll(p.getInputStream()).strip();
            if (p.waitFor() != 0 || out.isEmpty()) {
                throw new IllegalStateException("vmlab/build failed (exit " + p.exitValue() + ")");
            }
            return Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
        } catch (IOException e) {
            throw new UncheckedIOException("vmlab/build", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The checkout's root: the first directory up from here that holds {@code vmlab/build}. */
    private static Path repositoryRoot() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isExecutable(d.resolve("vmlab/build"))) {
                return d;
            }
        }
        throw new IllegalStateException("no vmlab/build above " + Path.of("").toAbsolutePath());
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        in.transferTo(buf);
        return buf.toString(StandardCharsets.UTF_8);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
