package io.rulesync.api.access;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which roles may make which request. Deny by default: a route not named here is operator-only,
 * so a new endpoint is never readable by an agent token by accident.
 */
public final class AccessRules {
    private static final Set<Role> READERS = EnumSet.of(Role.VIEWER, Role.OPERATOR);
    /** {@code /api/v1/clusters/{cluster}/nodes/{node}/acks}: group 1 is the node. */
    private static final Pattern ACK = Pattern.compile("/api/v1/clusters/[^/]+/nodes/([^/]+)/acks");

    private static final Pattern PLAN = Pattern.compile("/api/v1/clusters/[^/]+/plan");

    private AccessRules() {}

    /**
     * Health probes answer without a token: kubelets and load balancers carry none, and they say only UP/DOWN. So do the
     * dashboard's page and its scripts and styles: they hold no data, and every request they make for data carries the
     * token the operator typed into the page.
     */
    public static boolean isPublic(String method, String path) {
        boolean read = "GET".equals(method) || "HEAD".equals(method);
        return read
                && (path.equals("/actuator/health")
                        || path.startsWith("/actuator/health/")
                        || path.equals("/")
                        || path.equals("/index.html")
                        || path.startsWith("/ui/") && !path.contains(".."));
    }

    /** The roles allowed to make this request. */
    public static Set<Role> allowed(String method, String path) {
        boolean read = "GET".equals(method) || "HEAD".equals(method);
        if (read && path.startsWith("/api/v1/clusters/") && (path.endsWith("/snapshot") || path.endsWith("/deltas"))) {
            return EnumSet.of(Role.AGENT, Role.VIEWER, Role.OPERATOR);
        }
        // Only a node reports what it runs; an operator's word on it would be a forged ack.
        if ("POST".equals(method) && ACK.matcher(path).matches()) {
            return EnumSet.of(Role.AGENT);
        }
        // A plan changes nothing: a viewer's token (a pull request's check) may ask for one.
        if ("POST".equals(method) && PLAN.matcher(path).matches()) {
            return READERS;
        }
        if (read
                && (path.startsWith("/api/v1/")
                        || path.startsWith("/v3/api-docs")
                        || path.equals("/actuator/prometheus"))) {
            return READERS;
        }
        return EnumSet.of(Role.OPERATOR);
    }

    /**
     * Why an agent's credential may not make this request; empty when it may. A credential bound to a cluster reads only
     * that cluster's rules, one bound to a node only that node's; an unbound one reads every cluster's. An ack speaks for
     * a node, which only that node's own credential may: not one bound to its cluster only, nor an unbound one.
     * {@code queryNode} is the request's {@code ?node=} (null without one); an ack names its node in the path.
     */
    public static Optional<String> outOfScope(ApiTokens.Caller caller, String path, String queryNode) {
        ApiTokens.Scope scope = caller.scope();
        Matcher ack = ACK.matcher(path);
        String prefix = "/api/v1/clusters/";
        String cluster =
                path.startsWith(prefix) ? path.substring(prefix.length()).split("/", 2)[0] : null;
        if (ack.matches() && caller.role() == Role.AGENT && scope.node() == null) {
            return Optional.of("token '" + caller.name() + "' is not bound to a node: only node '" + ack.group(1)
                    + "''s own credential may acknowledge for it");
        }
        if (!scope.bound()) {
            return Optional.empty();
        }
        String node = ack.matches() ? ack.group(1) : queryNode;
        if (!scope.cluster().equals(cluster)) {
            return Optional.of("token '" + caller.name() + "' is bound to cluster '" + scope.cluster()
                    + "'; it may not read " + (cluster == null ? path : "cluster '" + cluster + "'"));
        }
        if (scope.node() != null && !scope.node().equals(node)) {
            return Optional.of("token '" + caller.name() + "' is bound to node '" + scope.node() + "' of cluster '"
                    + scope.cluster()
                    + "'; it may not "
                    + (ack.matches()
                            ? "acknowledge for node '" + node + "'"
                            : node == null ? "read every node's rules" : "read the rules of node '" + node + "'"));
        }
        return Optional.empty();
    }
}
