package io.rulesync.agent.ipvs;

import io.rulesync.agent.plan.ipvs.Draining;
import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An IPVS table in memory, for tests and dry runs: this project's kernels have no IPVS, so the
 * plans are proven against this double. It keeps ipvsadm's semantics: adding what exists, or
 * editing or deleting what does not, is refused with ipvsadm's message; a refused command does not
 * stop the ones after it ({@code ipvsadm -R} goes on too); deleting a virtual server deletes its
 * real servers. Connection counts are what the test sets. Not thread-safe.
 */
public final class MemoryIpvs implements IpvsKernel {
    /** The kernel's schedulers (net/netfilter/ipvs/ip_vs_*.c); others are refused as by the kernel. */
    static final Set<String> SCHEDULERS =
            Set.of("rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh", "twos");
    /** ipvsadm's MAX_TIMEOUT: 31 days. */
    private static final int MAX_PERSISTENCE = 86400 * 31;

    private final SortedMap<ServiceId, Service> services = new TreeMap<>();
    private final List<String> applied = new ArrayList<>();

    private static final class Service {
        VirtualServer settings;
        final SortedMap<Draining.Server, KernelRealServer> reals = new TreeMap<>();

        Service(VirtualServer settings) {
            this.settings = settings;
        }
    }

    @Override
    public List<KernelVirtualServer> list() {
        List<KernelVirtualServer> out = new ArrayList<>();
        services.forEach((id, s) -> out.add(new KernelVirtualServer(
                id,
                s.settings.scheduler(),
                s.settings.persistenceSeconds(),
                KernelVirtualServer.flagsOf(s.settings),
                List.copyOf(s.reals.values()))));
        return out;
    }

    @Override
    public void run(List<IpvsCommand> commands) throws IpvsApplyException {
        List<IpvsApplyException.Failure> failures = new ArrayList<>();
        for (IpvsCommand c : commands) {
            String refused = apply(c);
            if (refused == null) {
                applied.add(c.line());
            } else {
                failures.add(new IpvsApplyException.Failure(c.line(), refused));
            }
        }
        if (!failures.isEmpty()) {
            throw new IpvsApplyException("ipvsadm -R", failures);
        }
    }

    /** Sets a real server's connection counts, as traffic would. */
    public void setConnections(ServiceId id, IpAddress address, int port, int active, int inactive) {
        Service s = services.get(id);
        Draining.Server key = new Draining.Server(id, address, port);
        KernelRealServer r = s == null ? null : s.reals.get(key);
        if (r == null) {
            throw new IllegalArgumentException("no real server " + key);
        }
        s.reals.put(key, new KernelRealServer(address, port, r.forward(), r.weight(), active, inactive));
    }

    /** Every line applied so far, in order. */
    public List<String> applied() {
        return List.copyOf(applied);
    }

    /** The virtual servers held, by id. */
    public SortedSet<ServiceId> serviceIds() {
        return new TreeSet<>(services.keySet());
    }

    /** ipvsadm's error message for a refused command, or null when applied. */
    private String apply(IpvsCommand c) {
        ServiceId id = c.service();
        Service s = services.get(id);
        if (c instanceof IpvsCommand.AddService a) {
            if (s != null) {
                return "Service already exists";
            }
            String bad = settingsProblem(a.server());
            if (bad == null) {
                services.put(id, new Service(a.server()));
            }
            return bad;
        }
        if (c instanceof IpvsCommand.DeleteService) {
            return services.remove(id) == null ? "No such service" : null;
        }
        if (s == null) {
            return c instanceof IpvsCommand.EditService ? "No such service" : "Service not defined";
        }
        if (c instanceof IpvsCommand.EditService e) {
            String bad = settingsProblem(e.server());
            if (bad == null) {
                s.settings = e.server();
            }
            return bad;
        }
        if (c instanceof IpvsCommand.AddReal a) {
            Draining.Server key = key(id, a.real());
            if (s.reals.containsKey(key)) {
                return "Destination already exists";
            }
            String bad = realProblem(id, a.real());
            if (bad == null) {
                s.reals.put(
                        key,
                        new KernelRealServer(
                                a.real().address(),
                                a.real().port(),
                                KernelRealServer.MASQ,
                                a.real().weight(),
                                0,
                                0));
            }
            return bad;
        }
        if (c instanceof IpvsCommand.EditReal e) {
            Draining.Server key = key(id, e.real());
            KernelRealServer r = s.reals.get(key);
            if (r == null) {
                return "No such destination";
            }
            String bad = realProblem(id, e.real());
            if (bad == null) {
                s.reals.put(
                        key,
                        new KernelRealServer(
                                r.address(),
                                r.port(),
                                KernelRealServer.MASQ,
                                e.real().weight(),
                                r.activeConnections(),
                                r.inactiveConnections()));
            }
            return bad;
        }
        IpvsCommand.DeleteReal d = (IpvsCommand.DeleteReal) c;
        return s.reals.remove(new Draining.Server(id, d.address(), d.port())) == null ? "No such destination" : null;
    }

    private static Draining.Server key(ServiceId id, RealServer r) {
        return new Draining.Server(id, r.address(), r.port());
    }

    private static String settingsProblem(VirtualServer vs) {
        if (!SCHEDULERS.contains(vs.scheduler())) {
            return "Scheduler or persistence engine not found";
        }
        if (vs.persistenceSeconds() < 0 || vs.persistenceSeconds() > MAX_PERSISTENCE) {
            return "invalid timeout value `" + vs.persistenceSeconds() + "' specified";
        }
        if (vs.port() == 0 && vs.persistenceSeconds() == 0) {
            return "Zero port specified for non-persistent service";
        }
        return null;
    }

    private static String realProblem(ServiceId id, RealServer r) {
        if (r.weight() < 0 || r.weight() > 65535) {
            return "illegal weight specified";
        }
        return r.address().family() != id.address().family()
                ? "Operation not supported with specified address family"
                : null;
    }
}
