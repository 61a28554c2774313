package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.ipvs.VirtualServer;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A virtual server as the kernel holds it.
 *
 * @param persistenceSeconds 0: not persistent
 * @param flags the scheduler flags ({@code mh-port}, {@code mh-fallback}, ...) and the other
 *     options ipvsadm lists after them ({@code ops}, {@code mask=...}, {@code pe=...}); an edit
 *     without them resets them, so any difference from the desired set means an edit
 */
public record KernelVirtualServer(
        ServiceId service,
        String scheduler,
        int persistenceSeconds,
        SortedSet<String> flags,
        List<KernelRealServer> realServers)
        implements Comparable<KernelVirtualServer> {

    public KernelVirtualServer {
        flags = Collections.unmodifiableSortedSet(new TreeSet<>(flags));
        realServers = realServers.stream().sorted().toList();
    }

    /** The flags a desired virtual server gets: kube-proxy sets mh-port (source-port hashing) with mh. */
    public static SortedSet<String> flagsOf(VirtualServer vs) {
        return vs.scheduler().equals("mh") ? new TreeSet<>(Set.of("mh-port")) : new TreeSet<>();
    }

    /** Whether the service-level settings are those of {@code vs} (real servers aside). */
    public boolean sameSettings(VirtualServer vs) {
        return scheduler.equals(vs.scheduler())
                && persistenceSeconds == vs.persistenceSeconds()
                && flags.equals(flagsOf(vs));
    }

    @Override
    public int compareTo(KernelVirtualServer o) {
        return service.compareTo(o.service);
    }
}
