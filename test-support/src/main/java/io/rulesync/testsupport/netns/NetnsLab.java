package io.rulesync.testsupport.netns;

import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.testing.needs.Need;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A throw-away kube-proxy-style node built from Linux network namespaces, to prove compiled iptables rules
 * with real packets.
 *
 * <pre>
 *   client ns                node ns                                   pod ns i (i = 0..N-1)
 *   eth0 192.168.50.2/24 ----- eth0 192.168.50.1/24  (the node's IP)
 *        fd00:50::2/64             fd00:50::1/64
 *   default via the node      cbr0 10.244.0.1/24, fd00:10::1/64 (bridge)
 *                              +- veth&lt;i&gt; (hairpin on) ------------------ eth0 10.244.0.(10+i)/24
 *                                                                               fd00:10::(10+i)/64
 *                             default via 192.168.50.2 / fd00:50::2         default via 10.244.0.1 / fd00:10::1
 *                             forwarding on (v4, v6), route_localnet=1, rp_filter=0, send_redirects=0
 * </pre>
 *
 * IPv6 host parts reuse the IPv4 octet's digits, read as hex: pod 0 is {@code 10.244.0.10} and
 * {@code fd00:10::10} (= ::0x10). All addresses are returned in the canonical text form that {@link NetProbe}
 * prints for peers, so they can be compared as strings. The node's default route points at the client, so
 * Service IPs (which nothing owns) are routable from the node itself, as on a real node.
 * {@code br_netfilter} is active in every namespace, so bridged pod-to-pod frames also traverse iptables.
 *
 * <p>Rules go into the node namespace only ({@link #restore}, {@link #installKubeProxyJumps}). Servers run
 * as {@link NetProbe} processes ({@link #serve}); {@link #probe} runs a {@link NetProbe} client in any of the
 * lab's namespaces. {@link #close()} kills the processes and deletes every namespace the lab created; it also
 * runs from a JVM shutdown hook, and namespaces left behind by a JVM that died hard are reaped by the next lab.
 *
 * <p>Settings that differ from a fresh namespace, and why:
 * <ul>
 *   <li>every ns: IPv6 DAD off ({@code nodad}, {@code accept_dad=0}) so addresses work at once; ICMP rate
 *       limiting off ({@code icmp_ratelimit=0} and an empty {@code ratemask}, v4 and v6). With the defaults a
 *       REJECT answers a burst of about 6 attempts and then one per second per peer, so repeated probes of a
 *       REJECTed Service would turn into TIMEOUTs.</li>
 *   <li>node ns: forwarding, {@code route_localnet=1} (kube-proxy sets it for localhost NodePorts),
 *       {@code rp_filter=0}, {@code send_redirects=0}: a client packet to a Service IP that is not DNATed is
 *       routed back out of the interface it came in on, and the ICMP redirect is lab noise.</li>
 * </ul>
 *
 * <p>Kernel behaviour scenario tests must expect (measured on kernel 6.18, iptables 1.8.9 nft):
 * <ul>
 *   <li>Pod to Service to the same pod works only with hairpin mode on the bridge port (set here) plus a
 *       masquerade of that flow (the rules' job, KUBE-SEP's {@code -s <podIP> -j KUBE-MARK-MASQ}).</li>
 *   <li>Pod to Service to another pod relies on {@code br_netfilter}: the reply is bridged, and only
 *       {@code bridge-nf-call-iptables=1} lets conntrack undo the DNAT.</li>
 *   <li>IPv6 TCP to a REJECTed destination is REFUSED only after the first SYN retransmission (~1 s): the first
 *       ICMPv6 error reaches the socket while connect() still holds its lock and is dropped
 *       ({@code TcpExtLockDroppedIcmps}). Use a timeout of at least 1500 ms there; IPv4 is refused at once.</li>
 *   <li>From the node ns itself, a DROP in OUTPUT makes a UDP send fail with EPERM at once (NetProbe prints
 *       {@code ERROR EPERM ...}); a REJECT there is still reported as REFUSED; a TCP DROP is a TIMEOUT.</li>
 * </ul>
 *
 * <p>Usage: annotate the test with {@code @RequiresNetns} (rulesync-testing), then
 * {@code try (NetnsLab lab = new NetnsLab(2)) { ... }}. Not meant for concurrent use from several threads.
 */
public final class NetnsLab implements AutoCloseable {

    /** Prefix of every namespace this class creates: {@code rslab-<pid>-<seq>-<role>}. */
    static final String NS_PREFIX = "rslab-";
    /** Name of the node's bridge. */
    public static final String BRIDGE = "cbr0";
    /** Name of the node's uplink (towards the client) inside the node ns; also the pod/client interface name. */
    public static final String ETH0 = "eth0";

    private static final int MAX_PODS = 245; // 10 + i must stay a valid last octet
    private static final Path NETNS_DIR = Paths.get("/run/netns");
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Set<NetnsLab> OPEN = Collections.synchronizedSet(new LinkedHashSet<>());
    private static final Pattern FAILED_LINE =
            Pattern.compile("(?:line:? (\\d+) failed|Error occurred at line: (\\d+))");

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            List<NetnsLab> labs;
                            synchronized (OPEN) {
                                labs = new ArrayList<>(OPEN);
                            }
                            labs.forEach(NetnsLab::close);
                        },
                        "netns-lab-cleanup"));
    }

    private final int pods;
    private final String nodeNs;
    private final String clientNs;
    private final List<String> podNs = new ArrayList<>();
    private final List<String> namespaces = new ArrayList<>();
    private final List<Process> processes = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean closed;

    /** Result of a command: exit code and the complete stdout and stderr. */
    public record ExecResult(List<String> command, int exitCode, String stdout, String stderr) {
        /** True when the exit code is 0. */
        public boolean ok() {
            return exitCode == 0;
        }

        /** The non-empty lines of stdout. */
        public List<String> lines() {
            return stdout.lines().filter(l -> !l.isBlank()).toList();
        }

        /** This result if ok(), otherwise an IllegalStateException carrying the command, exit code and output. */
        public ExecResult orThrow() {
            if (!ok()) {
                throw new IllegalStateException(String.join(" ", command) + " failed with exit code " + exitCode
                        + "\nstderr: " + stderr.strip() + "\nstdout: " + stdout.strip());
            }
            return this;
        }
    }

    // ------------------------------------------------------------------------------------------------ set-up

    /**
     * Why a lab cannot be built on this machine ({@code needs ...: how to get it}), or empty when it can:
     * what {@code @RequiresNetns} checks (Linux, root, the tools, a namespace with working iptables), plus
     * the java executable that runs {@link NetProbe}. Checked once per JVM.
     */
    public static Optional<String> unavailableReason() {
        Need netns = Need.networkNamespaces();
        if (!netns.met()) {
            return Optional.of(netns.message());
        }
        return Files.isExecutable(Paths.get(javaExecutable()))
                ? Optional.empty()
                : Optional.of("needs a java executable at " + javaExecutable()
                        + " to run NetProbe: run the tests on a full JDK");
    }

    /**
     * Builds the lab: a node ns with bridge {@value #BRIDGE}, {@code pods} pod namespaces on the bridge and an
     * outside client ns wired to the node. Takes well under a second; on failure everything created so far is
     * deleted before the exception propagates.
     *
     * <p>Where namespaces are unavailable, the calling test is skipped (under {@code CI=true}: failed) with
     * the reason, as {@code @RequiresNetns} would have done; declare that on the test instead.
     *
     * @throws IllegalStateException when the lab cannot be built
     */
    public NetnsLab(int pods) {
        if (pods < 0 || pods > MAX_PODS) {
            throw new IllegalArgumentException("pods must be in 0.." + MAX_PODS + ": " + pods);
        }
        Need.networkNamespaces().require();
        unavailableReason().ifPresent(r -> {
            throw new IllegalStateException("netns lab unavailable: " + r);
        });
        reapStale();
        this.pods = pods;
        String base = NS_PREFIX + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet() + "-";
        this.nodeNs = base + "node";
        this.clientNs = base + "client";
        for (int i = 0; i < pods; i++) {
            podNs.add(base + "pod" + i);
        }
        namespaces.add(nodeNs);
        namespaces.add(clientNs);
        namespaces.addAll(podNs);
        OPEN.add(this);
        try {
            build();
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    private void build() {
        StringBuilder add = new StringBuilder();
        namespaces.forEach(ns -> add.append("netns add ").append(ns).append('\n'));
        run(List.of(tool("ip"), "-batch", "-"), add.toString(), 30).orThrow();

        // Sysctls before any link exists, so that interfaces created afterwards inherit the "default" values.
        // Every ns: no DAD (addresses usable at once) and no ICMP rate limiting (REJECT answers every attempt).
        // Node ns: what a kube-proxy node needs, plus rp_filter off and no ICMP redirects (see class comment).
        List<String> common = List.of(
                "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                "net.ipv4.icmp_ratelimit=0", "net.ipv4.icmp_ratemask=0",
                "net.ipv6.icmp.ratelimit=0", "net.ipv6.icmp.ratemask=");
        List<String> nodeOnly = List.of(
                "net.ipv4.ip_forward=1",
                "net.ipv6.conf.all.forwarding=1",
                "net.ipv6.conf.default.forwarding=1",
                "net.ipv4.conf.all.route_localnet=1",
                "net.ipv4.conf.default.route_localnet=1",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
                "net.ipv4.conf.all.send_redirects=0",
                "net.ipv4.conf.default.send_redirects=0",
                // Set, not assumed: a fresh namespace takes br_netfilter's default, which a host may have changed.
                "net.bridge.bridge-nf-call-iptables=1",
                "net.bridge.bridge-nf-call-ip6tables=1");
        StringBuilder sysctl = new StringBuilder("set -e\n");
        for (String ns : namespaces) {
            sysctl.append(shellQuote(tool("ip")))
                    .append(" netns exec ")
                    .append(ns)
                    .append(' ')
                    .append(shellQuote(tool("sysctl")))
                    .append(" -q -e -w");
            common.forEach(kv -> sysctl.append(' ').append(shellQuote(kv)));
            if (ns.equals(nodeNs)) {
                nodeOnly.forEach(kv -> sysctl.append(' ').append(shellQuote(kv)));
            }
            sysctl.append('\n');
        }
        run(List.of(tool("sh"), "-c", sysctl.toString()), null, 30).orThrow();

        StringBuilder node = new StringBuilder()
                .append("link set lo up\n")
                .append("link add ")
                .append(BRIDGE)
                .append(" type bridge\n")
                .append("addr add ")
                .append(bridgeIPv4())
                .append("/24 dev ")
                .append(BRIDGE)
                .append('\n')
                .append("addr add ")
                .append(bridgeIPv6())
                .append("/64 dev ")
                .append(BRIDGE)
                .append(" nodad\n")
                .append("link set ")
                .append(BRIDGE)
                .append(" up\n")
                .append("link add ")
                .append(ETH0)
                .append(" type veth peer name ")
                .append(ETH0)
                .append(" netns ")
                .append(clientNs)
                .append('\n')
                .append("addr add ")
                .append(nodeIPv4())
                .append("/24 dev ")
                .append(ETH0)
                .append('\n')
                .append("addr add ")
                .append(nodeIPv6())
                .append("/64 dev ")
                .append(ETH0)
                .append(" nodad\n")
                .append("link set ")
                .append(ETH0)
                .append(" up\n");
        for (int i = 0; i < pods; i++) {
            String veth = podHostVeth(i);
            node.append("link add ")
                    .append(veth)
                    .append(" type veth peer name ")
                    .append(ETH0)
                    .append(" netns ")
                    .append(podNs.get(i))
                    .append('\n')
                    .append("link set ")
                    .append(veth)
                    .append(" master ")
                    .append(BRIDGE)
                    .append('\n')
                    .append("link set ")
                    .append(veth)
                    .append(" type bridge_slave hairpin on\n")
                    .append("link set ")
                    .append(veth)
                    .append(" up\n");
        }
        // onlink: the client end is not up yet, so the gateway has no carrier at this point
        node.append("route add default via ")
                .append(clientIPv4())
                .append(" dev ")
                .append(ETH0)
                .append(" onlink\n")
                .append("route add ::/0 via ")
                .append(clientIPv6())
                .append(" dev ")
                .append(ETH0)
                .append(" onlink\n");
        ipBatch(nodeNs, node);

        ipBatch(clientNs, endpointConfig(clientIPv4(), clientIPv6(), nodeIPv4(), nodeIPv6()));
        for (int i = 0; i < pods; i++) {
            ipBatch(podNs.get(i), endpointConfig(podIPv4(i), podIPv6(i), bridgeIPv4(), bridgeIPv6()));
        }
    }

    private static StringBuilder endpointConfig(String v4, String v6, String gw4, String gw6) {
        return new StringBuilder()
                .append("link set lo up\n")
                .append("addr add ")
                .append(v4)
                .append("/24")
                .append(" dev ")
                .append(ETH0)
                .append('\n')
                .append("addr add ")
                .append(v6)
                .append("/64 dev ")
                .append(ETH0)
                .append(" nodad\n")
                .append("link set ")
                .append(ETH0)
                .append(" up\n")
                .append("route add default via ")
                .append(gw4)
                .append(" dev ")
                .append(ETH0)
                .append('\n')
                .append("route add ::/0 via ")
                .append(gw6)
                .append(" dev ")
                .append(ETH0)
                .append('\n');
    }

    private void ipBatch(String ns, CharSequence commands) {
        run(List.of(tool("ip"), "-n", ns, "-batch", "-"), commands.toString(), 30)
                .orThrow();
    }

    // ------------------------------------------------------------------------------------------------ names

    /** Number of pod namespaces. */
    public int pods() {
        return pods;
    }

    /** Name of the node namespace (where the rules live). */
    public String nodeNs() {
        return nodeNs;
    }

    /** Name of the outside client namespace. */
    public String clientNs() {
        return clientNs;
    }

    /** Name of pod i's namespace. */
    public String podNs(int i) {
        return podNs.get(checkPod(i));
    }

    /** All namespaces of this lab: node, client, then the pods. */
    public List<String> namespaces() {
        return List.copyOf(namespaces);
    }

    /** Pod i's IPv4 address, {@code 10.244.0.(10+i)}. */
    public String podIPv4(int i) {
        return "10.244.0." + (10 + checkPod(i));
    }

    /** Pod i's IPv6 address, {@code fd00:10::(10+i)} (the digits of the IPv4 octet, read as hex). */
    public String podIPv6(int i) {
        return "fd00:10::" + (10 + checkPod(i));
    }

    /** Name, inside the node ns, of the bridge port (host side veth) of pod i: {@code veth<i>}. */
    public String podHostVeth(int i) {
        return "veth" + checkPod(i);
    }

    /** The node's own IPv4 (its uplink towards the client): 192.168.50.1. */
    public String nodeIPv4() {
        return "192.168.50.1";
    }

    /** The node's own IPv6: fd00:50::1. */
    public String nodeIPv6() {
        return "fd00:50::1";
    }

    /** The outside client's IPv4: 192.168.50.2. */
    public String clientIPv4() {
        return "192.168.50.2";
    }

    /** The outside client's IPv6: fd00:50::2. */
    public String clientIPv6() {
        return "fd00:50::2";
    }

    /** The bridge's IPv4, the pods' gateway: 10.244.0.1. */
    public String bridgeIPv4() {
        return "10.244.0.1";
    }

    /** The bridge's IPv6, the pods' gateway: fd00:10::1. */
    public String bridgeIPv6() {
        return "fd00:10::1";
    }

    /** The pod CIDR: 10.244.0.0/24. */
    public String podCidrIPv4() {
        return "10.244.0.0/24";
    }

    /** The pod CIDR: fd00:10::/64. */
    public String podCidrIPv6() {
        return "fd00:10::/64";
    }

    private int checkPod(int i) {
        if (i < 0 || i >= pods) {
            throw new IndexOutOfBoundsException("pod " + i + " of " + pods);
        }
        return i;
    }

    // ------------------------------------------------------------------------------------------------ processes

    /** Starts a NetProbe server in pod i's namespace; see {@link #serveIn}. */
    public void serve(int pod, String proto, int port, String id) {
        serveIn(podNs(pod), proto, port, id);
    }

    /**
     * Starts {@code NetProbe serve proto port id} in any namespace of this lab (e.g. the node ns, for
     * host-network endpoints), waits until it printed READY, and keeps it until {@link #close()}. The server
     * also exits by itself when this JVM dies.
     *
     * @throws IllegalStateException when it exits or is not ready within 15 s (e.g. port already in use)
     */
    public void serveIn(String ns, String proto, int port, String id) {
        checkOwn(ns);
        List<String> cmd = new ArrayList<>(List.of(tool("ip"), "netns", "exec", ns));
        cmd.addAll(javaCommand());
        cmd.addAll(List.of("serve", proto, Integer.toString(port), id));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + cmd, e);
        }
        processes.add(p);
        // stdin stays open on purpose: NetProbe exits at EOF, i.e. when this JVM goes away.
        CompletableFuture<Void> ready = new CompletableFuture<>();
        StringBuilder early = new StringBuilder();
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = r.readLine()) != null) {
                            if (!ready.isDone()) {
                                if (line.equals("READY")) {
                                    ready.complete(null);
                                } else {
                                    synchronized (early) {
                                        early.append(line).append('\n');
                                    }
                                }
                            }
                        }
                    } catch (IOException ignored) {
                        // process killed
                    }
                    ready.completeExceptionally(new IllegalStateException("server exited before READY"));
                },
                "netprobe-" + id);
        reader.setDaemon(true);
        reader.start();
        try {
            ready.get(15, TimeUnit.SECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            p.destroyForcibly();
            String out;
            synchronized (early) {
                out = early.toString().strip();
            }
            throw new IllegalStateException(
                    "NetProbe serve " + proto + " " + port + " " + id + " in " + ns + " did not become ready: "
                            + e.getMessage() + (out.isEmpty() ? "" : "\noutput: " + out),
                    e);
        }
    }

    /** Runs {@code NetProbe connect} from ns; see {@link #probe(String, String, String, int, int, int, String)}. */
    public List<String> probe(String ns, String proto, String ip, int port, int count, int timeoutMs) {
        return probe(ns, proto, ip, port, count, timeoutMs, null);
    }

    /**
     * Makes {@code count} separate connection attempts (new socket and source port each) from namespace ns to
     * ip:port and returns one line per attempt: {@code OK <id> <peer-ip-seen-by-server>}, {@code REFUSED},
     * {@code TIMEOUT} or {@code ERROR <message>}.
     *
     * @param sourceIp local address to bind, or null to let the kernel choose
     * @throws IllegalStateException when the probe process itself fails
     */
    public List<String> probe(String ns, String proto, String ip, int port, int count, int timeoutMs, String sourceIp) {
        checkOwn(ns);
        List<String> cmd = new ArrayList<>(List.of(tool("ip"), "netns", "exec", ns));
        cmd.addAll(javaCommand());
        cmd.addAll(List.of(
                "connect", proto, ip, Integer.toString(port), Integer.toString(count), Integer.toString(timeoutMs)));
        if (sourceIp != null) {
            cmd.add(sourceIp);
        }
        long budgetSeconds = 30 + (long) count * (timeoutMs + 100) / 1000;
        ExecResult r = run(cmd, null, budgetSeconds).orThrow();
        List<String> lines = r.lines();
        if (lines.size() != count) {
            throw new IllegalStateException("expected " + count + " lines from " + String.join(" ", cmd) + ", got "
                    + lines + "\nstderr: " + r.stderr());
        }
        return lines;
    }

    /** Runs argv inside namespace ns ({@code ip netns exec ns argv...}) and returns its result, whatever the exit code. */
    public ExecResult exec(String ns, String... argv) {
        return execWithInput(ns, null, argv);
    }

    /** {@link #exec}, feeding {@code stdin} (e.g. an {@code ipset restore} input); null: empty input. */
    public ExecResult execWithInput(String ns, String stdin, String... argv) {
        checkOwn(ns);
        List<String> cmd = new ArrayList<>(List.of(tool("ip"), "netns", "exec", ns));
        cmd.addAll(List.of(argv));
        return run(cmd, stdin, 120);
    }

    // ------------------------------------------------------------------------------------------------ rules

    /**
     * Pipes iptables-restore input into {@code iptables-restore --noflush} (or {@code ip6tables-restore}) in the
     * node ns. Remember that with --noflush a declared chain ({@code :CHAIN - [0:0]}) is still flushed.
     *
     * @throws IllegalStateException with stderr (and the failing input line, when reported) on failure
     */
    public void restore(boolean ipv6, String iptablesRestoreInput) {
        String bin = tool(ipv6 ? "ip6tables-restore" : "iptables-restore");
        ExecResult r = run(
                List.of(tool("ip"), "netns", "exec", nodeNs, bin, "--noflush"),
                iptablesRestoreInput.endsWith("\n") ? iptablesRestoreInput : iptablesRestoreInput + "\n",
                600);
        if (!r.ok()) {
            StringBuilder msg = new StringBuilder(bin)
                    .append(" --noflush failed (exit ")
                    .append(r.exitCode())
                    .append("): ")
                    .append(r.stderr().strip());
            Matcher m = FAILED_LINE.matcher(r.stderr());
            if (m.find()) {
                int n = Integer.parseInt(m.group(1) != null ? m.group(1) : m.group(2));
                List<String> input = iptablesRestoreInput.lines().toList();
                if (n >= 1 && n <= input.size()) {
                    msg.append("\nline ").append(n).append(": ").append(input.get(n - 1));
                }
            }
            throw new IllegalStateException(msg.toString());
        }
    }

    /** {@code iptables-save} (or ip6tables-save) of the node ns, for assertions and failure messages. */
    public String save(boolean ipv6) {
        return exec(nodeNs, tool(ipv6 ? "ip6tables-save" : "iptables-save"))
                .orThrow()
                .stdout();
    }

    /**
     * Adds, in the node ns, kube-proxy's jumps from the built-in chains (its iptables proxier's
     * {@code iptablesJumpChains} plus, for IPv4 only, the kubelet KUBE-FIREWALL jumps) the way kube-proxy does:
     * for each entry in order, create the target chain if missing, then {@code -C} and, if absent, {@code -I 1}.
     * The rule is {@code <extraArgs> -m comment --comment <comment> -j <chain>}. Idempotent.
     */
    public void installKubeProxyJumps(boolean ipv6) {
        List<List<String>> jumps = new ArrayList<>();
        String newOnly = "-m conntrack --ctstate NEW";
        jumps.add(jump(
                "filter", "INPUT", "KUBE-EXTERNAL-SERVICES", newOnly, "kubernetes externally-visible service portals"));
        jumps.add(jump(
                "filter",
                "FORWARD",
                "KUBE-EXTERNAL-SERVICES",
                newOnly,
                "kubernetes externally-visible service portals"));
        jumps.add(jump("filter", "INPUT", "KUBE-NODEPORTS", "", "kubernetes health check service ports"));
        jumps.add(jump("filter", "FORWARD", "KUBE-SERVICES", newOnly, "kubernetes service portals"));
        jumps.add(jump("filter", "OUTPUT", "KUBE-SERVICES", newOnly, "kubernetes service portals"));
        jumps.add(jump("filter", "FORWARD", "KUBE-FORWARD", "", "kubernetes forwarding rules"));
        jumps.add(jump("filter", "INPUT", "KUBE-PROXY-FIREWALL", newOnly, "kubernetes load balancer firewall"));
        jumps.add(jump("filter", "OUTPUT", "KUBE-PROXY-FIREWALL", newOnly, "kubernetes load balancer firewall"));
        jumps.add(jump("filter", "FORWARD", "KUBE-PROXY-FIREWALL", newOnly, "kubernetes load balancer firewall"));
        jumps.add(jump("nat", "OUTPUT", "KUBE-SERVICES", "", "kubernetes service portals"));
        jumps.add(jump("nat", "PREROUTING", "KUBE-SERVICES", "", "kubernetes service portals"));
        jumps.add(jump("nat", "POSTROUTING", "KUBE-POSTROUTING", "", "kubernetes postrouting rules"));
        if (!ipv6) {
            jumps.add(jump("filter", "INPUT", "KUBE-FIREWALL", "", ""));
            jumps.add(jump("filter", "OUTPUT", "KUBE-FIREWALL", "", ""));
        }
        StringBuilder script = new StringBuilder()
                .append("ipt=")
                .append(shellQuote(tool(ipv6 ? "ip6tables" : "iptables")))
                .append('\n')
                .append("ensure_chain() { out=$(\"$ipt\" -t \"$1\" -N \"$2\" 2>&1) || case \"$out\" in")
                .append(" *'already exists'*) ;; *) echo \"$out\" >&2; exit 1;; esac; }\n")
                .append("ensure_rule() { t=$1; c=$2; shift 2; \"$ipt\" -t \"$t\" -C \"$c\" \"$@\" 2>/dev/null")
                .append(" || \"$ipt\" -t \"$t\" -I \"$c\" 1 \"$@\" || exit 1; }\n");
        for (List<String> j : jumps) {
            String table = j.get(0);
            String chain = j.get(1);
            String target = j.get(2);
            script.append("ensure_chain ")
                    .append(table)
                    .append(' ')
                    .append(target)
                    .append('\n');
            script.append("ensure_rule ").append(table).append(' ').append(chain);
            for (String arg : j.subList(3, j.size())) {
                script.append(' ').append(shellQuote(arg));
            }
            script.append('\n');
        }
        exec(nodeNs, tool("sh"), "-c", script.toString()).orThrow();
    }

    /** table, built-in chain, target, then the rule's arguments. */
    private static List<String> jump(String table, String chain, String target, String extra, String comment) {
        List<String> l = new ArrayList<>(List.of(table, chain, target));
        if (!extra.isEmpty()) {
            l.addAll(List.of(extra.split(" ")));
        }
        if (!comment.isEmpty()) {
            l.addAll(List.of("-m", "comment", "--comment", comment));
        }
        l.addAll(List.of("-j", target));
        return l;
    }

    private static String shellQuote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    // ------------------------------------------------------------------------------------------------ clean-up

    /** Kills the lab's processes and deletes all its namespaces. Idempotent; never throws. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<Process> ps;
        synchronized (processes) {
            ps = new ArrayList<>(processes);
            processes.clear();
        }
        ps.forEach(Process::destroyForcibly);
        for (Process p : ps) {
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        deleteNamespaces(namespaces);
        OPEN.remove(this);
    }

    private static void deleteNamespaces(List<String> names) {
        StringBuilder del = new StringBuilder();
        names.forEach(ns -> del.append("netns del ").append(ns).append('\n'));
        try {
            // -force: keep going past namespaces that were never created
            run(List.of(tool("ip"), "-force", "-batch", "-"), del.toString(), 30);
        } catch (RuntimeException e) {
            // fall through to the per-namespace attempt
        }
        for (String ns : names) {
            if (Files.exists(NETNS_DIR.resolve(ns))) {
                try {
                    run(List.of(tool("ip"), "netns", "del", ns), null, 30);
                } catch (RuntimeException ignored) {
                    // best effort
                }
            }
        }
    }

    /** Names of the namespaces currently present (the content of /run/netns, which is what {@code ip netns list} reads). */
    public static List<String> listNamespaces() {
        if (!Files.isDirectory(NETNS_DIR)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(NETNS_DIR)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + NETNS_DIR, e);
        }
    }

    /**
     * Deletes {@code rslab-<pid>-...} namespaces whose creating JVM is gone (it was SIGKILLed, so neither
     * close() nor the shutdown hook ran). Their NetProbe servers have already exited on stdin EOF.
     */
    static void reapStale() {
        List<String> stale = new ArrayList<>();
        for (String ns : listNamespaces()) {
            if (!ns.startsWith(NS_PREFIX)) {
                continue;
            }
            String rest = ns.substring(NS_PREFIX.length());
            int dash = rest.indexOf('-');
            try {
                long pid = Long.parseLong(dash < 0 ? rest : rest.substring(0, dash));
                if (ProcessHandle.of(pid).map(ph -> !ph.isAlive()).orElse(true)) {
                    stale.add(ns);
                }
            } catch (NumberFormatException ignored) {
                // not ours
            }
        }
        if (!stale.isEmpty()) {
            deleteNamespaces(stale);
        }
    }

    private void checkOwn(String ns) {
        if (closed) {
            throw new IllegalStateException("lab is closed");
        }
        if (!namespaces.contains(ns)) {
            throw new IllegalArgumentException(ns + " is not a namespace of this lab " + namespaces);
        }
    }

    // ------------------------------------------------------------------------------------------------ plumbing

    private static List<String> javaCommand() {
        return List.of(
                javaExecutable(),
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-XX:-UsePerfData",
                "-Xss512k",
                "-Xmx64m",
                "-cp",
                netProbeClassPath(),
                NetProbe.class.getName());
    }

    private static String javaExecutable() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * NetProbe needs the JDK and the model's IpAddress, so those two class path entries suffice
     * (surefire's java.class.path may be a manifest-only jar).
     */
    private static String netProbeClassPath() {
        try {
            return Paths.get(NetProbe.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    + java.io.File.pathSeparator
                    + Paths.get(IpAddress.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI());
        } catch (Exception e) {
            return System.getProperty("java.class.path");
        }
    }

    private static String which(String name) {
        String path = System.getenv().getOrDefault("PATH", "");
        List<String> dirs = new ArrayList<>(List.of(path.split(":")));
        dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/local/bin"));
        for (String d : dirs) {
            if (d.isEmpty()) {
                continue;
            }
            Path p = Paths.get(d, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    private static String tool(String name) {
        String p = which(name);
        if (p == null) {
            throw new IllegalStateException("missing tool " + name);
        }
        return p;
    }

    /**
     * Runs a command through the agent's own runner ({@link HostCommand}), feeding stdin (null: empty
     * stdin), and collects everything; a command still running after timeoutSeconds is killed and
     * reported as an exception, since a lab step that hangs is a broken test, not an outcome.
     */
    private static ExecResult run(List<String> cmd, String stdin, long timeoutSeconds) {
        CommandRunner.Result r;
        try {
            r = HostCommand.PROCESSES.run(cmd, stdin, Duration.ofSeconds(timeoutSeconds));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", cmd), e);
        }
        if (r.exit() == -1) {
            throw new IllegalStateException("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd));
        }
        return new ExecResult(List.copyOf(cmd), r.exit(), r.stdout(), r.stderr());
    }
}
