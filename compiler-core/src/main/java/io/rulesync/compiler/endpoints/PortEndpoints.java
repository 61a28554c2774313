package io.rulesync.compiler.endpoints;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The endpoints of one service port in one family, sorted by their {@code ip:port} text, before a
 * node is chosen. The same {@code ip:port} in several slices collapses to one endpoint; kube-proxy
 * keeps the first, unless a later copy is local to the node, so where copies differ in their node
 * the result depends on the node ({@link #forNode}).
 *
 * @param endpoints  the first copy of each endpoint
 * @param duplicates for endpoints listed more than once with different nodes: every copy, in slice order
 */
public record PortEndpoints(List<EndpointInfo> endpoints, Map<String, List<EndpointInfo>> duplicates) {
    public static final PortEndpoints NONE = new PortEndpoints(List.of(), Map.of());

    public PortEndpoints {
        endpoints = List.copyOf(endpoints);
        duplicates = Map.copyOf(duplicates);
    }

    /** The endpoints as the proxier of {@code node} sees them. */
    public List<EndpointInfo> forNode(String node) {
        if (duplicates.isEmpty()) {
            return endpoints;
        }
        List<EndpointInfo> out = new ArrayList<>(endpoints.size());
        for (EndpointInfo ep : endpoints) {
            EndpointInfo chosen = ep;
            for (EndpointInfo copy : duplicates.getOrDefault(ep.text(), List.of())) {
                if (copy.isLocalTo(node)) {
                    chosen = copy;
                }
            }
            out.add(chosen);
        }
        return out;
    }

    public int size() {
        return endpoints.size();
    }

    /** Nodes that run one of these endpoints (any copy). */
    public Set<String> nodes() {
        Set<String> out = new TreeSet<>();
        for (EndpointInfo ep : endpoints) {
            if (!ep.nodeName().isEmpty()) {
                out.add(ep.nodeName());
            }
        }
        duplicates
                .values()
                .forEach(copies -> copies.forEach(ep -> {
                    if (!ep.nodeName().isEmpty()) {
                        out.add(ep.nodeName());
                    }
                }));
        return out;
    }
}
