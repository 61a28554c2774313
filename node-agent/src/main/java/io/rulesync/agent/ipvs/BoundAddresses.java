package io.rulesync.agent.ipvs;

import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.ToolMessage;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The service addresses bound to kube-proxy's dummy device {@code kube-ipvs0}, which make them local
 * so that IPVS sees their packets. Created when missing (as kube-proxy's EnsureDummyDevice does),
 * then addresses added and removed one family at a time, in one {@code ip -batch}, in the agent's
 * network namespace or a named one.
 */
public final class BoundAddresses {
    public static final String DEVICE = "kube-ipvs0";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern FAILED_LINE = Pattern.compile("Command failed -:(\\d+)");

    private final HostTool tool;
    private final String device;

    /** {@code runner}: runs the tools, in the node's network namespace or a lab's ({@link CommandRunner#inNetns}). */
    public BoundAddresses(CommandRunner runner) {
        this(runner, DEVICE);
    }

    BoundAddresses(CommandRunner runner, String device) {
        this.tool = new HostTool(runner);
        this.device = device;
    }

    /** What to add and remove for one family: the rest of the device's addresses stay. */
    public record Diff(SortedSet<IpAddress> add, SortedSet<IpAddress> remove) {
        public Diff {
            add = Collections.unmodifiableSortedSet(new TreeSet<>(add));
            remove = Collections.unmodifiableSortedSet(new TreeSet<>(remove));
        }

        /** {@code current}: the device's addresses, both families; only {@code family}'s are compared. */
        public static Diff between(IpFamily family, Collection<IpAddress> desired, Collection<IpAddress> current) {
            SortedSet<IpAddress> want = new TreeSet<>();
            for (IpAddress a : desired) {
                if (a.family() != family) {
                    throw new IllegalArgumentException(a + " is not " + family);
                }
                want.add(a);
            }
            SortedSet<IpAddress> have = new TreeSet<>();
            current.stream().filter(a -> a.family() == family).forEach(have::add);
            SortedSet<IpAddress> add = new TreeSet<>(want);
            add.removeAll(have);
            SortedSet<IpAddress> remove = new TreeSet<>(have);
            remove.removeAll(want);
            return new Diff(add, remove);
        }

        public boolean isEmpty() {
            return add.isEmpty() && remove.isEmpty();
        }
    }

    /**
     * The addresses in {@code ip -o addr show dev DEV} output, with their prefix lengths. Link-local
     * IPv6 addresses are the kernel's own (an interface that is up gets one) and are left out.
     * <pre>
     * 3: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\       valid_lft forever preferred_lft forever
     * 3: kube-ipvs0    inet6 fd00:10:96::20/128 scope global nodad \       valid_lft forever preferred_lft forever
     * </pre>
     */
    public static SortedMap<IpAddress, Integer> parse(String ipOutput) {
        SortedMap<IpAddress, Integer> out = new TreeMap<>();
        for (String line : ipOutput.split("\n")) {
            String[] f = line.strip().split("\\s+");
            for (int i = 0; i + 1 < f.length; i++) {
                if (!f[i].equals("inet") && !f[i].equals("inet6")) {
                    continue;
                }
                String cidr = f[i + 1];
                int slash = cidr.indexOf('/');
                IpAddress a = IpAddress.parse(slash < 0 ? cidr : cidr.substring(0, slash));
                int len = slash < 0
                        ? (a.family() == IpFamily.IPV4 ? 32 : 128)
                        : Integer.parseInt(cidr.substring(slash + 1));
                if (!a.toString().toLowerCase(Locale.ROOT).startsWith("fe80:")) {
                    out.put(a, len);
                }
                break;
            }
        }
        return out;
    }

    /** The device's addresses, or empty when the device does not exist. */
    public SortedMap<IpAddress, Integer> list() throws IpvsApplyException {
        CommandRunner.Result r = exec(List.of("ip", "-o", "addr", "show", "dev", device), null);
        if (!r.ok()) {
            if (r.stderr().contains("does not exist")) {
                return new TreeMap<>();
            }
            throw new IpvsApplyException("ip addr show dev " + device + " failed: " + ToolMessage.of(r));
        }
        try {
            return parse(r.stdout());
        } catch (IllegalArgumentException e) {
            throw new IpvsApplyException("cannot read ip addr show dev " + device + ": " + e.getMessage());
        }
    }

    /** Binds exactly {@code desired} of {@code family} to the device; returns what changed. */
    public Diff sync(IpFamily family, Collection<IpAddress> desired) throws IpvsApplyException {
        ensureDevice();
        SortedMap<IpAddress, Integer> current = list();
        Diff diff = Diff.between(family, desired, current.keySet());
        batch(diff, current);
        return diff;
    }

    /**
     * From {@code before}, which the device holds (the agent bound it), to {@code after}, without
     * listing the device: the per-version path. A device changed behind the agent's back makes
     * this fail, and the next attempt syncs.
     */
    public Diff update(IpFamily family, Collection<IpAddress> before, Collection<IpAddress> after)
            throws IpvsApplyException {
        Diff diff = Diff.between(family, after, before);
        batch(diff, Map.of());
        return diff;
    }

    /** One ip -batch; {@code prefixes}: the prefix length the kernel reports for an address to remove (default: host). */
    private void batch(Diff diff, Map<IpAddress, Integer> prefixes) throws IpvsApplyException {
        if (diff.isEmpty()) {
            return;
        }
        List<String> lines = new ArrayList<>();
        for (IpAddress a : diff.remove()) {
            int host = a.family() == IpFamily.IPV4 ? 32 : 128;
            lines.add("addr del " + a + "/" + prefixes.getOrDefault(a, host) + " dev " + device);
        }
        for (IpAddress a : diff.add()) {
            // nodad: the address is usable at once; a dummy device does no DAD anyway (it is NOARP).
            lines.add(
                    a.family() == IpFamily.IPV4
                            ? "addr add " + a + "/32 dev " + device
                            : "addr add " + a + "/128 dev " + device + " nodad");
        }
        CommandRunner.Result r = exec(List.of("ip", "-batch", "-"), String.join("\n", lines) + "\n");
        if (!r.ok()) {
            Matcher m = FAILED_LINE.matcher(r.stderr());
            String line = m.find() && Integer.parseInt(m.group(1)) <= lines.size()
                    ? lines.get(Integer.parseInt(m.group(1)) - 1)
                    : "ip -batch";
            List<String> said = ToolMessage.lines(r.stderr());
            String reason = said.stream()
                    .filter(l -> !FAILED_LINE.matcher(l).find())
                    .findFirst()
                    .map(ToolMessage::bounded)
                    .orElse(ToolMessage.of(r));
            throw new IpvsApplyException("ip", List.of(new IpvsApplyException.Failure(line, reason)));
        }
    }

    /** Creates the dummy device when it is missing; a kernel without the dummy driver is reported as such. */
    private void ensureDevice() throws IpvsApplyException {
        if (exec(List.of("ip", "link", "show", "dev", device), null).ok()) {
            return;
        }
        CommandRunner.Result r = exec(List.of("ip", "link", "add", device, "type", "dummy"), null);
        if (!r.ok()) {
            String why = r.stderr().contains("Unknown device type")
                    ? ": this kernel has no dummy link driver (module dummy)"
                    : "";
            throw new IpvsApplyException("cannot create the dummy device " + device + " (ip link add " + device
                    + " type dummy: " + ToolMessage.of(r) + ")" + why);
        }
    }

    private CommandRunner.Result exec(List<String> argv, String stdin) throws IpvsApplyException {
        return tool.run(argv, stdin, TIMEOUT);
    }
}
