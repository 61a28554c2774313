package io.rulesync.testsupport.netns;

import io.rulesync.model.cluster.IpAddress;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * Tiny TCP/UDP server and client that {@link NetnsLab} runs inside network namespaces with
 * {@code ip netns exec <ns> java -cp <test-classes> io.rulesync.testsupport.netns.NetProbe ...}.
 * It depends on the JDK only, so the class path is just the directory holding this class.
 *
 * <pre>
 * serve   tcp|udp &lt;port&gt; &lt;id&gt;
 *     Binds the dual-stack wildcard (:: and, through it, 0.0.0.0) and serves until killed or until its
 *     stdin reaches EOF (so it dies with the JVM that started it). Prints READY once bound.
 *     TCP: on accept, writes "&lt;id&gt; &lt;peer-ip&gt;\n" and closes. UDP: answers each datagram with
 *     "&lt;id&gt; &lt;peer-ip&gt;".
 *
 * connect tcp|udp &lt;ip&gt; &lt;port&gt; &lt;count&gt; &lt;timeoutMs&gt; [&lt;sourceIp&gt;]
 *     Makes count separate attempts, each on a new socket (new source port, so conntrack sees a new flow),
 *     and prints one line per attempt:
 *       OK &lt;response&gt;   the server's line, e.g. "OK pod0 10.244.0.1"
 *       REFUSED         TCP RST or ICMP unreachable (UDP: PortUnreachableException on a connected socket)
 *       TIMEOUT         nothing within timeoutMs (the budget covers connect and read together)
 *       ERROR &lt;msg&gt;     anything else (no route, connection reset after accept, empty answer, ...)
 * </pre>
 *
 * Peer IPs are printed in canonical text form: dotted quad for IPv4 (also for IPv4-mapped IPv6 peers of the
 * dual-stack socket), RFC 5952 compressed lower-case form for IPv6 (e.g. {@code fd00:10::10}).
 */
public final class NetProbe {

    private NetProbe() {}

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (args.length == 4 && args[0].equals("serve")) {
            serve(out, proto(args[1]), Integer.parseInt(args[2]), args[3]);
        } else if ((args.length == 6 || args.length == 7) && args[0].equals("connect")) {
            String proto = proto(args[1]);
            InetAddress target = InetAddress.getByName(args[2]);
            int port = Integer.parseInt(args[3]);
            int count = Integer.parseInt(args[4]);
            int timeoutMs = Integer.parseInt(args[5]);
            InetAddress source = args.length == 7 ? InetAddress.getByName(args[6]) : null;
            for (int i = 0; i < count; i++) {
                out.println(
                        proto.equals("tcp")
                                ? connectTcp(target, port, timeoutMs, source)
                                : connectUdp(target, port, timeoutMs, source));
            }
            out.flush();
        } else {
            System.err.println("usage: NetProbe serve tcp|udp <port> <id>\n"
                    + "       NetProbe connect tcp|udp <ip> <port> <count> <timeoutMs> [<sourceIp>]");
            System.exit(2);
        }
    }

    private static String proto(String s) {
        if (!s.equals("tcp") && !s.equals("udp")) {
            throw new IllegalArgumentException("protocol must be tcp or udp: " + s);
        }
        return s;
    }

    // ---------------------------------------------------------------- server

    private static void serve(PrintStream out, String proto, int port, String id) throws IOException {
        exitOnStdinEof();
        InetSocketAddress wildcard = new InetSocketAddress(InetAddress.getByName("::"), port);
        if (proto.equals("tcp")) {
            try (ServerSocket server = new ServerSocket()) {
                server.setReuseAddress(true);
                server.bind(wildcard, 512);
                out.println("READY");
                while (true) {
                    try (Socket s = server.accept()) {
                        OutputStream os = s.getOutputStream();
                        os.write((id + " " + text(s.getInetAddress()) + "\n").getBytes(StandardCharsets.UTF_8));
                        os.flush();
                    } catch (IOException e) {
                        // one broken client must not stop the server
                    }
                }
            }
        } else {
            try (DatagramSocket socket = new DatagramSocket(null)) {
                socket.setReuseAddress(true);
                socket.bind(wildcard);
                out.println("READY");
                byte[] buf = new byte[2048];
                while (true) {
                    DatagramPacket in = new DatagramPacket(buf, buf.length);
                    socket.receive(in);
                    byte[] reply = (id + " " + text(in.getAddress())).getBytes(StandardCharsets.UTF_8);
                    try {
                        socket.send(new DatagramPacket(reply, reply.length, in.getSocketAddress()));
                    } catch (IOException e) {
                        // e.g. an ICMP error queued by an earlier send; keep serving
                    }
                }
            }
        }
    }

    /** The parent holds our stdin pipe; when it goes away (even by SIGKILL), exit instead of lingering. */
    private static void exitOnStdinEof() {
        Thread t = new Thread(
                () -> {
                    try {
                        InputStream in = System.in;
                        byte[] buf = new byte[256];
                        while (in.read(buf) >= 0) {
                            // discard
                        }
                    } catch (IOException ignored) {
                        // treat like EOF
                    }
                    System.exit(0);
                },
                "stdin-watch");
        t.setDaemon(true);
        t.start();
    }

    // ---------------------------------------------------------------- client

    static String connectTcp(InetAddress target, int port, int timeoutMs, InetAddress source) {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        try (Socket s = new Socket()) {
            s.setSoLinger(true, 0); // close with RST: leaves no TIME_WAIT behind on our side
            if (source != null) {
                s.bind(new InetSocketAddress(source, 0));
            }
            s.connect(new InetSocketAddress(target, port), timeoutMs);
            int left = (int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
            s.setSoTimeout(left);
            BufferedReader r = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            String line = r.readLine();
            return line == null ? "ERROR connection closed without a response" : "OK " + line;
        } catch (SocketTimeoutException e) {
            return "TIMEOUT";
        } catch (ConnectException e) {
            // "Connection refused": RST, or ICMP port unreachable (REJECT's default) on the SYN.
            String m = String.valueOf(e.getMessage());
            return m.contains("refused") ? "REFUSED" : "ERROR " + oneLine(e);
        } catch (IOException | RuntimeException e) {
            return "ERROR " + oneLine(e);
        }
    }

    static String connectUdp(InetAddress target, int port, int timeoutMs, InetAddress source) {
        try (DatagramSocket s =
                source == null ? new DatagramSocket() : new DatagramSocket(new InetSocketAddress(source, 0))) {
            s.connect(target, port); // connected, so ICMP errors come back as PortUnreachableException
            s.setSoTimeout(Math.max(1, timeoutMs));
            byte[] probe = "probe".getBytes(StandardCharsets.UTF_8);
            try {
                s.send(new DatagramPacket(probe, probe.length));
            } catch (IOException e) {
                // EPERM: netfilter dropped the datagram in this namespace's OUTPUT path (REJECT drops it too,
                // after queuing an ICMP error for us). Look for that ICMP error to tell REJECT from DROP.
                if (!String.valueOf(e.getMessage()).contains("not permitted")) {
                    throw e;
                }
                s.setSoTimeout(Math.max(1, Math.min(timeoutMs, 200)));
                try {
                    s.receive(new DatagramPacket(new byte[1], 1));
                } catch (PortUnreachableException icmp) {
                    return "REFUSED";
                } catch (IOException other) {
                    // no ICMP error: a plain DROP
                }
                return "ERROR EPERM: dropped by netfilter on the local output path";
            }
            byte[] buf = new byte[2048];
            DatagramPacket in = new DatagramPacket(buf, buf.length);
            s.receive(in);
            return "OK " + new String(in.getData(), 0, in.getLength(), StandardCharsets.UTF_8).trim();
        } catch (PortUnreachableException e) {
            return "REFUSED";
        } catch (SocketTimeoutException e) {
            return "TIMEOUT";
        } catch (IOException | RuntimeException e) {
            return "ERROR " + oneLine(e);
        }
    }

    private static String oneLine(Throwable e) {
        return (e.getClass().getSimpleName() + ": " + e.getMessage()).replace('\n', ' ');
    }

    // ---------------------------------------------------------------- address text

    /**
     * Canonical text of an address, as rulesync's model prints it (RFC 5952 for IPv6), so that tests
     * compare strings; IPv4-mapped IPv6 peers come from Java as plain IPv4 already.
     */
    static String text(InetAddress a) {
        String literal = a.getHostAddress();
        int scope = literal.indexOf('%');
        return IpAddress.parse(scope < 0 ? literal : literal.substring(0, scope))
                .toString();
    }
}
