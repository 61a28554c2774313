package io.rulesync.agent.ipvs;

import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.ToolMessage;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Protocol;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The kernel's IPVS table through ipvsadm, in the agent's network namespace or a named one. Lists
 * with {@code ipvsadm -Ln --exact}, which alone carries the connection counts; applies every
 * command in one {@code ipvsadm -R}.
 *
 * <p>{@code ipvsadm -R} goes on past a refused line, prints the kernel's message without saying
 * which line it was, and exits with the status of the last line only. So whenever it complains,
 * the table is listed again and the commands whose effect is missing are the ones named.
 */
public final class IpvsadmKernel implements IpvsKernel {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final HostTool tool;

    /** {@code runner}: runs the tools, in the node's network namespace or a lab's ({@link CommandRunner#inNetns}). */
    public IpvsadmKernel(CommandRunner runner) {
        this.tool = new HostTool(runner);
    }

    /** kube-proxy's IPVS settings (see {@link IpvsKernel#prepare}), in this namespace. */
    static final List<String> SYSCTLS = List.of(
            "net.ipv4.vs.conntrack=1", "net.ipv4.vs.expire_nodest_conn=1", "net.ipv4.vs.expire_quiescent_template=1");

    @Override
    public void prepare() throws IpvsApplyException {
        List<String> argv = new ArrayList<>(List.of("sysctl", "-q", "-w"));
        argv.addAll(SYSCTLS);
        CommandRunner.Result r = exec(argv, null);
        if (!r.ok()) {
            throw new IpvsApplyException("sysctl " + String.join(" ", SYSCTLS) + " failed: " + ToolMessage.of(r));
        }
    }

    @Override
    public List<KernelVirtualServer> list() throws IpvsApplyException {
        CommandRunner.Result r = exec(List.of("ipvsadm", "-Ln", "--exact"), null);
        if (!r.ok()) {
            throw new IpvsApplyException("ipvsadm -Ln failed: " + ToolMessage.of(r));
        }
        try {
            return parseListing(r.stdout());
        } catch (IllegalArgumentException e) {
            throw new IpvsApplyException("cannot read ipvsadm -Ln: " + e.getMessage());
        }
    }

    /** Beyond this many Services, one full listing costs less than a process per Service. */
    static final int LIST_ONE_BY_ONE = 64;

    @Override
    public List<KernelVirtualServer> list(Collection<ServiceId> services) throws IpvsApplyException {
        if (services.size() > LIST_ONE_BY_ONE) {
            return IpvsKernel.super.list(services);
        }
        List<KernelVirtualServer> out = new ArrayList<>();
        for (ServiceId id : new TreeSet<>(services)) {
            List<String> argv = new ArrayList<>(List.of("ipvsadm", "-Ln", "--exact"));
            argv.addAll(List.of(id.service().split(" ")));
            CommandRunner.Result r = exec(argv, null);
            if (!r.ok()) {
                // ipvsadm's answer for a virtual server the kernel does not have.
                if (r.stderr().contains("No such service")) {
                    continue;
                }
                throw new IpvsApplyException("ipvsadm -Ln " + id.service() + " failed: " + ToolMessage.of(r));
            }
            try {
                out.addAll(parseListing(r.stdout()));
            } catch (IllegalArgumentException e) {
                throw new IpvsApplyException("cannot read ipvsadm -Ln " + id.service() + ": " + e.getMessage());
            }
        }
        return out;
    }

    @Override
    public void run(List<IpvsCommand> commands) throws IpvsApplyException {
        if (commands.isEmpty()) {
            return;
        }
        String input = commands.stream().map(IpvsCommand::line).collect(Collectors.joining("\n", "", "\n"));
        CommandRunner.Result r = exec(List.of("ipvsadm", "-R"), input);
        if (r.ok() && r.stderr().isBlank()) {
            return;
        }
        List<String> messages = ToolMessage.lines(r.stderr());
        String all = ToolMessage.of(r);
        List<IpvsCommand> missing;
        try {
            missing = notInEffect(commands, list());
        } catch (IpvsApplyException e) {
            throw new IpvsApplyException(
                    "ipvsadm -R failed (" + all + ") and the table cannot be listed: " + e.getMessage());
        }
        if (missing.isEmpty() && r.ok()) {
            return; // a refusal whose effect holds anyway, such as adding what was just added by someone else
        }
        List<IpvsApplyException.Failure> failures = new ArrayList<>();
        if (missing.isEmpty()) {
            // The exit status is the last line's.
            failures.add(new IpvsApplyException.Failure(
                    commands.get(commands.size() - 1).line(), all));
        }
        for (int i = 0; i < missing.size(); i++) {
            // One message per refused line, in order, when the counts agree; otherwise all of them.
            String reason = messages.size() == missing.size() ? messages.get(i) : all;
            failures.add(new IpvsApplyException.Failure(missing.get(i).line(), reason));
        }
        throw new IpvsApplyException("ipvsadm -R", failures);
    }

    /** The commands whose effect the listing does not show. */
    static List<IpvsCommand> notInEffect(List<IpvsCommand> commands, List<KernelVirtualServer> listing) {
        Map<ServiceId, KernelVirtualServer> byId = new TreeMap<>();
        listing.forEach(k -> byId.put(k.service(), k));
        List<IpvsCommand> out = new ArrayList<>();
        for (IpvsCommand c : commands) {
            KernelVirtualServer k = byId.get(c.service());
            boolean done;
            if (c instanceof IpvsCommand.AddService a) {
                done = k != null && k.sameSettings(a.server());
            } else if (c instanceof IpvsCommand.EditService e) {
                done = k != null && k.sameSettings(e.server());
            } else if (c instanceof IpvsCommand.DeleteService) {
                done = k == null;
            } else if (c instanceof IpvsCommand.AddReal a) {
                done = holds(k, a.real().address(), a.real().port(), a.real().weight());
            } else if (c instanceof IpvsCommand.EditReal e) {
                done = holds(k, e.real().address(), e.real().port(), e.real().weight());
            } else {
                IpvsCommand.DeleteReal d = (IpvsCommand.DeleteReal) c;
                done = k == null
                        || k.realServers().stream()
                                .noneMatch(r -> r.address().equals(d.address()) && r.port() == d.port());
            }
            if (!done) {
                out.add(c);
            }
        }
        return out;
    }

    private static boolean holds(KernelVirtualServer k, IpAddress address, int port, int weight) {
        return k != null
                && k.realServers().stream()
                        .anyMatch(r -> r.address().equals(address)
                                && r.port() == port
                                && r.weight() == weight
                                && r.masquerades());
    }

    /**
     * Reads {@code ipvsadm -Ln} output (ipvsadm 1.31):
     * <pre>
     * IP Virtual Server version 1.2.1 (size=4096)
     * Prot LocalAddress:Port Scheduler Flags
     *   -&gt; RemoteAddress:Port           Forward Weight ActiveConn InActConn
     * TCP  10.96.0.10:53 rr persistent 10800
     *   -&gt; 10.244.1.5:53                Masq    1      0          0
     * SCTP [fd00::20]:3868 mh (mh-fallback,mh-port) persistent 600 mask 64
     * </pre>
     * The service line is {@code %-4s %s} (protocol, address) then the scheduler, its flags in
     * parentheses, {@code persistent N} with an optional {@code mask}, {@code ops}, {@code pe NAME}.
     * A real server line may carry a tunnel column before the weight, so the counts are read from
     * the end. Firewall-mark services ({@code FWM  5 rr}) are not kube-proxy's and are skipped.
     *
     * @throws IllegalArgumentException on a line it cannot read, quoting it
     */
    public static List<KernelVirtualServer> parseListing(String text) {
        List<KernelVirtualServer> out = new ArrayList<>();
        Building current = null;
        boolean skipping = false;
        for (String line : text.split("\n")) {
            String t = line.strip();
            if (t.isEmpty()
                    || t.startsWith("IP Virtual Server")
                    || t.startsWith("Prot ")
                    || t.startsWith("-> RemoteAddress")) {
                continue;
            }
            String[] f = t.split("\\s+");
            if (f[0].equals("->")) {
                if (skipping) {
                    continue;
                }
                if (current == null || f.length < 6) {
                    throw new IllegalArgumentException("unexpected real server line '" + t + "'");
                }
                current.reals.add(realServer(f, t));
                continue;
            }
            if (current != null) {
                out.add(current.build());
                current = null;
            }
            skipping = f[0].equals("FWM");
            if (!skipping) {
                current = service(f, t);
            }
        }
        if (current != null) {
            out.add(current.build());
        }
        // The kernel lists in its hash order; callers, and the in-memory table, read them in order.
        out.sort(java.util.Comparator.comparing(KernelVirtualServer::service));
        return List.copyOf(out);
    }

    /** A service while its real servers are read. */
    private record Building(
            ServiceId id, String scheduler, int persistence, SortedSet<String> flags, List<KernelRealServer> reals) {
        KernelVirtualServer build() {
            return new KernelVirtualServer(
                    id, scheduler, persistence, flags, reals.stream().sorted().toList());
        }
    }

    private static Building service(String[] f, String line) {
        Protocol protocol;
        try {
            protocol = Protocol.valueOf(f[0]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown protocol in '" + line + "'");
        }
        if (f.length < 3) {
            throw new IllegalArgumentException("no scheduler in '" + line + "'");
        }
        Endpoint vip = endpoint(f[1], line);
        int persistence = 0;
        SortedSet<String> flags = new TreeSet<>();
        for (int i = 3; i < f.length; i++) {
            String w = f[i];
            if (w.startsWith("(") && w.endsWith(")")) {
                for (String flag : w.substring(1, w.length() - 1).split(",")) {
                    if (!flag.isEmpty()) {
                        flags.add(flag);
                    }
                }
            } else if (w.equals("persistent") && i + 1 < f.length) {
                persistence = number(f[++i], line);
            } else if ((w.equals("mask") || w.equals("pe")) && i + 1 < f.length) {
                flags.add(w + "=" + f[++i]);
            } else {
                flags.add(w);
            }
        }
        return new Building(
                new ServiceId(vip.address(), vip.port(), protocol), f[2], persistence, flags, new ArrayList<>());
    }

    private static KernelRealServer realServer(String[] f, String line) {
        Endpoint rs = endpoint(f[1], line);
        int n = f.length;
        return new KernelRealServer(
                rs.address(), rs.port(), f[2], number(f[n - 3], line), number(f[n - 2], line), number(f[n - 1], line));
    }

    private record Endpoint(IpAddress address, int port) {}

    /** {@code 10.0.0.1:80} or {@code [fd00::1]:80}. */
    private static Endpoint endpoint(String s, String line) {
        int colon = s.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("no port in '" + line + "'");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new Endpoint(IpAddress.parse(host), number(s.substring(colon + 1), line));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad address in '" + line + "': " + e.getMessage());
        }
    }

    private static int number(String s, String line) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + s + "' is not a number in '" + line + "'");
        }
    }

    private CommandRunner.Result exec(List<String> argv, String stdin) throws IpvsApplyException {
        return tool.run(argv, stdin, TIMEOUT);
    }
}
