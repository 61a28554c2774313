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
    private Duration bootTime; // set once it answered
    private final Path console;

    private KernelVm(Process qemu, int port, Path console) {
        this.qemu = qemu;
        this.port = port;
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
                accelerator(root, built),
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
        KernelVm vm = new KernelVm(qemu, port, console);
        Runtime.getRuntime().addShutdownHook(new Thread(qemu::destroyForcibly, "vmlab-off"));
        long deadline = start + BOOT_LIMIT.toNanos();
        while (true) {
            if (!qemu.isAlive()) {
                throw new IllegalStateException(
                        "the lab VM stopped while booting (exit " + qemu.exitValue() + "): " + vm.consoleTail());
            }
            if (vm.answers()) {
                break;
            }
            if (System.nanoTime() > deadline) {
                qemu.destroyForcibly();
                throw new IllegalStateException(
                        "the lab VM did not answer within " + BOOT_LIMIT + ": " + vm.consoleTail());
            }
            sleep(100);
        }
        vm.bootTime = Duration.ofNanos(System.nanoTime() - start);
        return vm;
    }

    /**
     * Whether the VM answers {@code true} within half a second, on a connection of its own. While the VM is not
     * listening yet, qemu holds a connection and sends the VM its SYN again only after one, two, four seconds: a short
     * try and a new connection find it serving seconds sooner than waiting on one.
     */
    private boolean answers() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
            s.setSoTimeout(500);
            String request = "1 0 " + Base64.getEncoder().encodeToString("true\0".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write((request + "\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return "0 0 0".equals(line(s.getInputStream()));
        } catch (IOException e) {
            return false; // not serving yet
        }
    }

    /** From qemu's start to the first command answered. */
    public Duration bootTime() {
        return bootTime;
    }

    /** Runs commands in the VM (its root namespace), as the host's runner runs them on the host. */
    public CommandRunner runner() {
        return this::send;
    }

    /**
     * A network namespace of the VM with its loopback up, as a node's is (the kernel refuses IPVS real servers, "address
     * not unicast", while no route reaches them). Closing it deletes it.
     */
    public Netns namespace(String name) {
        sh("ip netns add " + name + " && ip -n " + name + " link set lo up");
        return new Netns(this, name);
    }

    /** A namespace of the VM; {@link #runner()} runs commands in it. */
    public record Netns(KernelVm vm, String name) implements AutoCloseable {
        public CommandRunner runner() {
            return vm.runner().inNetns(name);
        }

        @Override
        public void close() {
            vm.sh("ip netns delete " + name);
        }
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

    /** The connection commands go over, kept between commands; null until the first, or after it broke. */
    private Socket channel;

    /**
     * Sends one command over the kept connection, opening it first if need be. Until the VM's server listens, qemu
     * takes a connection and resets it before any command ran: such a fresh connection is tried again, for a few
     * seconds. A kept connection that breaks is not: its command may have run.
     */
    private synchronized CommandRunner.Result send(List<String> argv, String stdin, Duration timeout)
            throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            boolean fresh = channel == null;
            if (fresh) {
                channel = new Socket();
                try {
                    channel.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                } catch (IOException e) {
                    hangUp();
                    throw e;
                }
            }
            try {
                return exchange(argv, stdin, timeout);
            } catch (NotServed e) {
                hangUp();
                if (!fresh) {
                    throw new IOException(
                            "the lab VM's command connection broke before " + argv + ": " + e.getMessage());
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("the lab VM does not take commands: " + e.getMessage(), e);
                }
                sleep(20);
            } catch (IOException | RuntimeException e) {
                hangUp(); // mid-answer: what is left of it would be read as the next command's
                throw e;
            }
        }
    }

    private void hangUp() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // it is gone either way
            }
            channel = null;
        }
    }

    /** Nothing of the request was taken: the connection was reset, or ended, before the VM's server read it. */
    private static final class NotServed extends IOException {
        NotServed(String message) {
            super(message);
        }
    }

    /** One request and its answer, framed as {@code vmlab/serve} says. */
    private CommandRunner.Result exchange(List<String> argv, String stdin, Duration timeout) throws IOException {
        long seconds = Math.max(1, (timeout.toMillis() + 999) / 1000);
        channel.setSoTimeout((int) Math.min(Integer.MAX_VALUE, (seconds + 30) * 1000));
        StringBuilder args = new StringBuilder();
        for (String a : argv) {
            args.append(a).append('\0');
        }
        byte[] in = stdin == null ? new byte[0] : stdin.getBytes(StandardCharsets.UTF_8);
        String header = seconds + " " + in.length + " "
                + Base64.getEncoder().encodeToString(args.toString().getBytes(StandardCharsets.UTF_8)) + "\n";
        InputStream answer = channel.getInputStream();
        String status;
        try {
            OutputStream out = channel.getOutputStream();
            out.write(header.getBytes(StandardCharsets.US_ASCII));
            out.write(in);
            out.flush();
            status = line(answer);
        } catch (java.net.SocketException e) {
            throw new NotServed(e.getMessage());
        }
        if (status == null) {
            throw new NotServed("no answer");
        }
        String[] f = status.split(" ");
        if (f.length != 3) {
            throw new IOException("the lab VM answered " + argv + " with '" + status + "'");
        }
        byte[] out = readExactly(answer, Integer.parseInt(f[1]), argv);
        byte[] err = readExactly(answer, Integer.parseInt(f[2]), argv);
        return new CommandRunner.Result(
                Integer.parseInt(f[0]),
                new String(out, StandardCharsets.UTF_8),
                new String(err, StandardCharsets.UTF_8));
    }

    /** The status line of an answer; null if the connection ended before any of it. */
    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                if (buf.size() == 0) {
                    return null;
                }
                throw new IOException("the lab VM's answer ended inside its status line: " + buf);
            }
            buf.write(b);
        }
        return buf.toString(StandardCharsets.US_ASCII);
    }

    private static byte[] readExactly(InputStream in, int n, List<String> argv) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new IOException(
                    "the lab VM's answer to " + argv + " ended after " + b.length + " of " + n + " bytes");
        }
        return b;
    }

    /** Powers the VM off (it holds nothing to keep). */
    @Override
    public void close() {
        synchronized (this) {
            hangUp();
        }
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
        return Path.of(tool(root, "vmlab/build"));
    }

    /** Runs one of the lab's scripts, its messages to this JVM's error stream; returns the last line it printed. */
    private static String tool(Path root, String script, String... args) {
        List<String> argv = new ArrayList<>(List.of(root.resolve(script).toString()));
        argv.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(argv)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            String out = readAll(p.getInputStream()).strip();
            if (p.waitFor() != 0 || out.isEmpty()) {
                throw new IllegalStateException(script + " failed (exit " + p.exitValue() + ")");
            }
            return out.lines().reduce((a, b) -> b).orElseThrow();
        } catch (IOException e) {
            throw new UncheckedIOException(script, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String accelerator;

    /** kvm or tcg, as {@code vmlab/accel} finds (once per host boot: a /dev/kvm may be there and not work). */
    private static synchronized String accelerator(Path root, Path built) {
        if (accelerator == null) {
            String out = tool(root, "vmlab/accel", built.toString());
            if (!out.equals("kvm") && !out.equals("tcg")) {
                throw new IllegalStateException("vmlab/accel answered '" + out + "', neither kvm nor tcg");
            }
            accelerator = out;
        }
        return accelerator;
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
