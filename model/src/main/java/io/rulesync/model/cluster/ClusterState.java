package io.rulesync.model.cluster;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.pcollections.TreePMap;
import org.pcollections.TreePSet;

/**
 * The Services, EndpointSlices and Nodes of one cluster: an immutable value. Every change returns a
 * new state that shares all untouched structure with the old one (persistent trees), so folding one
 * event costs O(log n), and iteration is always in key order, whatever order the objects arrived in.
 */
public final class ClusterState {
    private static final ClusterState EMPTY =
            new ClusterState(TreePMap.empty(), TreePMap.empty(), TreePMap.empty(), TreePMap.empty());

    private final TreePMap<NamespacedName, Service> services;
    private final TreePMap<NamespacedName, EndpointSlice> endpointSlices;
    private final TreePMap<String, Node> nodes;
    /** Service name to the names of the slices labelled with it (the Service need not exist). */
    private final TreePMap<NamespacedName, TreePSet<NamespacedName>> slicesByService;

    private ClusterState(
            TreePMap<NamespacedName, Service> services,
            TreePMap<NamespacedName, EndpointSlice> endpointSlices,
            TreePMap<String, Node> nodes,
            TreePMap<NamespacedName, TreePSet<NamespacedName>> slicesByService) {
        this.services = services;
        this.endpointSlices = endpointSlices;
        this.nodes = nodes;
        this.slicesByService = slicesByService;
    }

    public static ClusterState empty() {
        return EMPTY;
    }

    /** Builds a state from objects in any order; for equal keys the later object wins. */
    public static ClusterState of(
            Collection<Service> services, Collection<EndpointSlice> slices, Collection<Node> nodes) {
        ClusterState s = EMPTY;
        for (Service svc : services) {
            s = s.withService(svc);
        }
        for (EndpointSlice slice : slices) {
            s = s.withEndpointSlice(slice);
        }
        for (Node node : nodes) {
            s = s.withNode(node);
        }
        return s;
    }

    public ClusterState withService(Service service) {
        Objects.requireNonNull(service, "service");
        return new ClusterState(services.plus(service.name(), service), endpointSlices, nodes, slicesByService);
    }

    public ClusterState withoutService(NamespacedName name) {
        return new ClusterState(services.minus(name), endpointSlices, nodes, slicesByService);
    }

    public ClusterState withEndpointSlice(EndpointSlice slice) {
        Objects.requireNonNull(slice, "slice");
        TreePMap<NamespacedName, TreePSet<NamespacedName>> index =
                unindex(slicesByService, endpointSlices.get(slice.name()));
        TreePSet<NamespacedName> names = index.getOrDefault(slice.service(), TreePSet.empty());
        index = index.plus(slice.service(), names.plus(slice.name()));
        return new ClusterState(services, endpointSlices.plus(slice.name(), slice), nodes, index);
    }

    public ClusterState withoutEndpointSlice(NamespacedName name) {
        EndpointSlice old = endpointSlices.get(name);
        if (old == null) {
            return this;
        }
        return new ClusterState(services, endpointSlices.minus(name), nodes, unindex(slicesByService, old));
    }

    public ClusterState withNode(Node node) {
        Objects.requireNonNull(node, "node");
        return new ClusterState(services, endpointSlices, nodes.plus(node.name(), node), slicesByService);
    }

    public ClusterState withoutNode(String name) {
        return new ClusterState(services, endpointSlices, nodes.minus(name), slicesByService);
    }

    /** Services in {@code namespace/name} order. */
    public Collection<Service> services() {
        return services.values();
    }

    public Optional<Service> service(NamespacedName name) {
        return Optional.ofNullable(services.get(name));
    }

    public Collection<EndpointSlice> endpointSlices() {
        return endpointSlices.values();
    }

    public Optional<EndpointSlice> endpointSlice(NamespacedName name) {
        return Optional.ofNullable(endpointSlices.get(name));
    }

    /** The slices labelled with that Service's name, in slice-name order. */
    public List<EndpointSlice> slicesOf(NamespacedName service) {
        TreePSet<NamespacedName> names = slicesByService.get(service);
        if (names == null) {
            return List.of();
        }
        List<EndpointSlice> out = new ArrayList<>(names.size());
        for (NamespacedName n : names) {
            out.add(endpointSlices.get(n));
        }
        return out;
    }

    public Collection<Node> nodes() {
        return nodes.values();
    }

    /** Services, EndpointSlices and Nodes held. */
    public int objectCount() {
        return services.size() + endpointSlices.size() + nodes.size();
    }

    public Optional<Node> node(String name) {
        return Optional.ofNullable(nodes.get(name));
    }

    private static TreePMap<NamespacedName, TreePSet<NamespacedName>> unindex(
            TreePMap<NamespacedName, TreePSet<NamespacedName>> index, EndpointSlice old) {
        if (old == null) {
            return index;
        }
        TreePSet<NamespacedName> names = index.get(old.service());
        if (names == null) {
            return index;
        }
        TreePSet<NamespacedName> rest = names.minus(old.name());
        return rest.isEmpty() ? index.minus(old.service()) : index.plus(old.service(), rest);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterState other
                && services.equals(other.services)
                && endpointSlices.equals(other.endpointSlices)
                && nodes.equals(other.nodes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(services, endpointSlices, nodes);
    }

    @Override
    public String toString() {
        return "ClusterState[" + services.size() + " services, " + endpointSlices.size() + " endpoint slices, "
                + nodes.size() + " nodes]";
    }
}
