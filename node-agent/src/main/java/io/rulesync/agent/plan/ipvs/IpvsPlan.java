package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The commands that move the kernel's virtual servers of one family to the desired ones, as
 * kube-proxy's IPVS proxier does it (syncService, syncEndpoint, cleanLegacyService and
 * graceful_termination.go), plus the draining state after them. Pure.
 *
 * <ul>
 *   <li>Never a flush and reload: only adds, edits and deletes, so live connections survive.</li>
 *   <li>Virtual servers: missing ones are added; ones whose scheduler, persistence or flags differ
 *       are edited; ones of this family that are not desired are deleted at once.</li>
 *   <li>Real servers: missing ones are added; a wrong weight or forwarding method is edited. One that
 *       is not desired any more: UDP and SCTP ones are deleted at once (the kernel expires their
 *       connections on the next packet, {@code expire_nodest_conn}); a TCP one without connections
 *       too; a TCP one with connections gets weight 0 and drains until its connections are gone or
 *       its deadline passes.</li>
 *   <li>A draining real server that is desired again gets its weight back and stops draining.
 *       kube-proxy deletes and re-adds it instead, which cuts the connections it still serves.</li>
 * </ul>
 * Commands come sorted by virtual server, then real server.
 *
 * @param draining the draining state once the commands ran; keep the old one if they failed (both are safe)
 */
public record IpvsPlan(List<IpvsCommand> commands, Draining draining) {

    /**
     * How long a TCP real server drains at most when no deadline is given: IPVS's own default timeout
     * of an established TCP connection (900 s), after which an idle one is gone anyway.
     */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofMinutes(15);

    public IpvsPlan {
        commands = List.copyOf(commands);
        Objects.requireNonNull(draining, "draining");
    }

    public boolean isEmpty() {
        return commands.isEmpty();
    }

    /**
     * @param family the family planned; the kernel's virtual servers of the other family are left alone
     * @param desired this family's virtual servers with their real servers
     * @param current what the kernel holds ({@code IpvsKernel.list()} in {@code agent.ipvs}), both families
     * @param draining the state the last plan returned
     * @param now the instant deadlines are measured from
     * @param drainTimeout how long a TCP real server drains at most
     */
    public static IpvsPlan plan(
            IpFamily family,
            List<VirtualServer> desired,
            List<KernelVirtualServer> current,
            Draining draining,
            Instant now,
            Duration drainTimeout) {
        SortedMap<ServiceId, VirtualServer> want = new TreeMap<>();
        for (VirtualServer vs : desired) {
            if (vs.address().family() != family) {
                throw new IllegalArgumentException("virtual server " + vs.key() + " is not " + family);
            }
            if (want.put(ServiceId.of(vs), vs) != null) {
                throw new IllegalArgumentException("virtual server " + vs.key() + " is desired twice");
            }
        }
        SortedMap<ServiceId, KernelVirtualServer> have = new TreeMap<>();
        for (KernelVirtualServer k : current) {
            if (k.service().address().family() == family) {
                have.put(k.service(), k);
            }
        }
        SortedSet<ServiceId> ids = new TreeSet<>(want.keySet());
        ids.addAll(have.keySet());

        List<IpvsCommand> out = new ArrayList<>();
        SortedMap<Draining.Server, Instant> next = new TreeMap<>();
        for (ServiceId id : ids) {
            VirtualServer w = want.get(id);
            KernelVirtualServer h = have.get(id);
            if (w == null) {
                out.add(new IpvsCommand.DeleteService(id));
            } else if (h == null) {
                out.add(new IpvsCommand.AddService(w));
                w.realServers().forEach(r -> out.add(new IpvsCommand.AddReal(id, r)));
            } else {
                if (!h.sameSettings(w)) {
                    out.add(new IpvsCommand.EditService(w));
                }
                realServers(id, w, h, draining, now, drainTimeout, out, next);
            }
        }
        return new IpvsPlan(out, new Draining(next));
    }

    private static void realServers(
            ServiceId id,
            VirtualServer w,
            KernelVirtualServer h,
            Draining draining,
            Instant now,
            Duration drainTimeout,
            List<IpvsCommand> out,
            SortedMap<Draining.Server, Instant> next) {
        SortedMap<Draining.Server, RealServer> want = new TreeMap<>();
        w.realServers().forEach(r -> want.put(new Draining.Server(id, r.address(), r.port()), r));
        SortedMap<Draining.Server, KernelRealServer> have = new TreeMap<>();
        h.realServers().forEach(r -> have.put(new Draining.Server(id, r.address(), r.port()), r));
        SortedSet<Draining.Server> keys = new TreeSet<>(want.keySet());
        keys.addAll(have.keySet());
        for (Draining.Server key : keys) {
            RealServer wr = want.get(key);
            KernelRealServer hr = have.get(key);
            if (hr == null) {
                out.add(new IpvsCommand.AddReal(id, wr));
            } else if (wr != null) {
                // Also how a draining one comes back: weight 1 again, and it is not carried into next.
                if (hr.weight() != wr.weight() || !hr.masquerades()) {
                    out.add(new IpvsCommand.EditReal(id, wr));
                }
            } else {
                Instant deadline = draining.deadlines().get(key);
                boolean graceful = id.protocol() == Protocol.TCP;
                if (!graceful || hr.connections() == 0 || (deadline != null && !now.isBefore(deadline))) {
                    out.add(new IpvsCommand.DeleteReal(id, hr.address(), hr.port()));
                } else {
                    if (hr.weight() != 0) {
                        out.add(new IpvsCommand.EditReal(id, new RealServer(hr.address(), hr.port(), 0)));
                    }
                    next.put(key, deadline != null ? deadline : now.plus(drainTimeout));
                }
            }
        }
    }
}
