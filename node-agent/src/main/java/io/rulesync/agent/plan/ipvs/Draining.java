package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpAddress;
import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The real servers being gracefully terminated (weight 0, waiting for their connections to end),
 * each with the instant it is removed whatever its connections. Kept by the agent between plans;
 * losing it is safe: a weight-0 real server that is not desired starts draining again.
 */
public record Draining(SortedMap<Server, Instant> deadlines) {

    private static final Draining NONE = new Draining(new TreeMap<>());

    /** A real server of one virtual server. */
    public record Server(ServiceId service, IpAddress address, int port) implements Comparable<Server> {
        @Override
        public int compareTo(Server o) {
            int c = service.compareTo(o.service);
            if (c != 0) {
                return c;
            }
            c = address.compareTo(o.address);
            return c != 0 ? c : Integer.compare(port, o.port);
        }

        @Override
        public String toString() {
            return service.key() + " -> " + address.withPort(port);
        }
    }

    public Draining {
        deadlines = Collections.unmodifiableSortedMap(new TreeMap<>(deadlines));
    }

    public static Draining none() {
        return NONE;
    }

    public static Draining of(Map<Server, Instant> deadlines) {
        return new Draining(new TreeMap<>(deadlines));
    }

    /**
     * The state after a plan that saw only the virtual servers {@code seen} accepts (one family, or
     * the few a version changed): the plan's entries for those, this state's for all others, which
     * the plan could not know about and must not end.
     */
    public Draining after(Draining planned, Predicate<ServiceId> seen) {
        Map<Server, Instant> out = new TreeMap<>(planned.deadlines());
        deadlines.forEach((server, deadline) -> {
            if (!seen.test(server.service())) {
                out.put(server, deadline);
            }
        });
        return of(out);
    }

    public Optional<Instant> deadline(ServiceId service, IpAddress address, int port) {
        return Optional.ofNullable(deadlines.get(new Server(service, address, port)));
    }

    public boolean isEmpty() {
        return deadlines.isEmpty();
    }

    public int size() {
        return deadlines.size();
    }
}
