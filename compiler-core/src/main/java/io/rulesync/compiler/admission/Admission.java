package io.rulesync.compiler.admission;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.LoadBalancerIngress;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.manifest.Problem;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.pcollections.TreePMap;
import org.pcollections.TreePSet;

/**
 * What the API server's allocators would have kept out of a cluster, which objects read from
 * manifest folders or the events topic never went through: a ClusterIP, and a NodePort number,
 * belong to one Service only. A Service that claims one held by another is left out of the rules as
 * a whole, as the API server would have refused to create it, and the conflict is reported naming
 * both Services and the field.
 *
 * <p>The winner is decided by the state, never by arrival order, so the same objects give the same
 * rules whichever came first: Services are taken in namespace, then name order, and one is admitted
 * when none of its claims is held by an admitted Service before it. (A Service left out holds
 * nothing, so a third one that only collides with it is admitted, as the API server would have.)
 *
 * <p>Immutable and incremental: {@link #update} re-examines only the Services whose claims changed
 * and those sharing a ClusterIP or NodePort with them, so a batch costs what it touches.
 */
public final class Admission {
    public static final Admission EMPTY =
            new Admission(TreePMap.empty(), TreePMap.empty(), TreePSet.empty(), TreePMap.empty());

    /** One thing a Service holds exclusively ({@code ClusterIP 10.96.0.10}, {@code NodePort 30080}) and where it says so. */
    record Claim(String resource, String field) {}

    private final TreePMap<NamespacedName, List<Claim>> claims;
    /** Resource to the Services claiming it, in name order. */
    private final TreePMap<String, TreePSet<NamespacedName>> claimants;

    private final TreePSet<NamespacedName> excluded;
    /** Problems of a Service that do not depend on the others (special load-balancer IPs), for the Services that have any. */
    private final TreePMap<NamespacedName, List<Problem>> notes;

    private Admission(
            TreePMap<NamespacedName, List<Claim>> claims,
            TreePMap<String, TreePSet<NamespacedName>> claimants,
            TreePSet<NamespacedName> excluded,
            TreePMap<NamespacedName, List<Problem>> notes) {
        this.claims = claims;
        this.claimants = claimants;
        this.excluded = excluded;
        this.notes = notes;
    }

    /** The admission of a whole state. */
    public static Admission of(ClusterState state) {
        List<NamespacedName> all = state.services().stream().map(Service::name).toList();
        return EMPTY.update(state, all).next();
    }

    /**
     * The next admission, and the Services whose admission changed (to compile again, although
     * their own objects may not have changed).
     */
    public record Update(Admission next, Set<NamespacedName> flipped) {
        public Update {
            flipped = Set.copyOf(flipped);
        }
    }

    /**
     * The admission of {@code state}, where only the Services named in {@code changed} (added,
     * changed or deleted; naming an unchanged one is harmless) differ from the state this admission
     * was made from.
     */
    public Update update(ClusterState state, Collection<NamespacedName> changed) {
        TreePMap<NamespacedName, List<Claim>> c = claims;
        TreePMap<String, TreePSet<NamespacedName>> by = claimants;
        TreePMap<NamespacedName, List<Problem>> n = notes;
        TreePSet<NamespacedName> out = excluded;
        // Services that may have to be judged again, taken in name order: a Service's admission depends
        // only on Services before it, so one pass in that order settles everything.
        TreeSet<NamespacedName> work = new TreeSet<>();
        for (NamespacedName name : changed) {
            List<Claim> old = c.get(name);
            Optional<Service> svc = state.service(name);
            List<Claim> now = svc.map(Admission::claimsOf).orElse(null);
            List<Problem> note = svc.map(Admission::notesOf).orElse(List.of());
            n = note.isEmpty() ? n.minus(name) : n.plus(name, note);
            if (Objects.equals(old, now)) {
                continue;
            }
            work.add(name);
            for (Claim claim : old == null ? List.<Claim>of() : old) {
                TreePSet<NamespacedName> rest =
                        by.getOrDefault(claim.resource(), TreePSet.empty()).minus(name);
                by = rest.isEmpty() ? by.minus(claim.resource()) : by.plus(claim.resource(), rest);
                work.addAll(rest);
            }
            for (Claim claim : now == null ? List.<Claim>of() : now) {
                TreePSet<NamespacedName> holders = by.getOrDefault(claim.resource(), TreePSet.empty());
                work.addAll(holders);
                by = by.plus(claim.resource(), holders.plus(name));
            }
            c = now == null ? c.minus(name) : c.plus(name, now);
        }
        Set<NamespacedName> flipped = new TreeSet<>();
        while (!work.isEmpty()) {
            NamespacedName name = work.pollFirst();
            List<Claim> mine = c.get(name);
            boolean was = out.contains(name);
            boolean is = false;
            if (mine != null) {
                for (Claim claim : mine) {
                    is |= holder(by, out, name, claim.resource()) != null;
                }
            }
            if (is == was) {
                continue;
            }
            out = is ? out.plus(name) : out.minus(name);
            if (mine != null) {
                flipped.add(name);
                for (Claim claim : mine) {
                    work.addAll(by.get(claim.resource()).tailSet(name, false));
                }
            }
        }
        return new Update(new Admission(c, by, out, n), flipped);
    }

    /** The first admitted Service before {@code name} claiming {@code resource}, or null. */
    private static NamespacedName holder(
            TreePMap<String, TreePSet<NamespacedName>> by,
            TreePSet<NamespacedName> excluded,
            NamespacedName name,
            String resource) {
        for (NamespacedName other : by.getOrDefault(resource, TreePSet.empty()).headSet(name, false)) {
            if (!excluded.contains(other)) {
                return other;
            }
        }
        return null;
    }

    /** The Services left out, in name order. */
    public Set<NamespacedName> excluded() {
        return excluded;
    }

    /** {@code state} without the Services left out: what the rules are compiled from. */
    public ClusterState admit(ClusterState state) {
        ClusterState s = state;
        for (NamespacedName name : excluded) {
            s = s.withoutService(name);
        }
        return s;
    }

    /**
     * Everything reported about this cluster's Services, in Service name order: each claim that left
     * a Service out (naming the Service that holds it), and each load-balancer IP left out of the
     * rules. Equal states give equal lists.
     */
    public List<Problem> problems() {
        TreeSet<NamespacedName> names = new TreeSet<>(excluded);
        names.addAll(notes.keySet());
        List<Problem> out = new ArrayList<>();
        for (NamespacedName name : names) {
            out.addAll(notes.getOrDefault(name, List.of()));
            if (!excluded.contains(name)) {
                continue;
            }
            for (Claim claim : claims.get(name)) {
                NamespacedName holder = holder(claimants, excluded, name, claim.resource());
                if (holder == null) {
                    continue;
                }
                String theirs = claims.get(holder).stream()
                        .filter(h -> h.resource().equals(claim.resource()))
                        .map(Claim::field)
                        .findFirst()
                        .orElseThrow();
                String kind = claim.resource().substring(0, claim.resource().indexOf(' '));
                String value = claim.resource().substring(kind.length() + 1);
                out.add(new Problem(
                        "",
                        "Service " + name,
                        claim.field(),
                        value + " is also the " + kind + " of Service "
                                + holder + " (" + theirs
                                + "), which sorts first and keeps it; the API server allocates a " + kind
                                + " to one Service only, so this Service is left out of the rules"));
            }
        }
        return List.copyOf(out);
    }

    private static List<Claim> claimsOf(Service svc) {
        List<Claim> out = new ArrayList<>();
        for (int i = 0; i < svc.clusterIPs().size(); i++) {
            out.add(new Claim("ClusterIP " + svc.clusterIPs().get(i), "spec.clusterIPs[" + i + "]"));
        }
        // The NodePort allocator hands out port numbers, whatever the protocol.
        for (int i = 0; i < svc.ports().size(); i++) {
            ServicePort p = svc.ports().get(i);
            if (p.nodePort() != 0) {
                out.add(new Claim("NodePort " + p.nodePort(), "spec.ports[" + i + "].nodePort"));
            }
        }
        if (svc.healthCheckNodePort() != 0) {
            out.add(new Claim("NodePort " + svc.healthCheckNodePort(), "spec.healthCheckNodePort"));
        }
        return List.copyOf(out);
    }

    /**
     * The API server accepts any address as a load balancer's ingress IP (ValidateLoadBalancerStatus
     * checks its form only), but a rule for a special one would capture traffic for the node itself
     * (its loopback, the metadata service), and the agents refuse such rules: it is left out
     * ({@link io.rulesync.compiler.endpoints.ServicePortInfo}) and said here.
     */
    private static List<Problem> notesOf(Service svc) {
        List<Problem> out = new ArrayList<>();
        for (LoadBalancerIngress ing : svc.loadBalancerIngress()) {
            IpAddress ip = ing.ip();
            Optional<SpecialRange> special = ip.specialRange();
            if (!ing.proxyMode() && special.isPresent()) {
                out.add(new Problem(
                        "",
                        "Service " + svc.name(),
                        "status.loadBalancer.ingress",
                        ip + " is "
                                + special.get().label()
                                + ": the API server accepts it here, but rulesync writes no rule for it"
                                + " (it would capture traffic meant for the node itself)"));
            }
        }
        return List.copyOf(out);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Admission a
                && a.claims.equals(claims)
                && a.claimants.equals(claimants)
                && a.excluded.equals(excluded)
                && a.notes.equals(notes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(claims, excluded);
    }
}
