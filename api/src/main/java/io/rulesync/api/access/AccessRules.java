package io.rulesync.api.access;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.http.server.PathContainer;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Which roles may make which request: the {@link Access} on each of the api's handler methods, matched as the
 * dispatcher matches them (path patterns, the most specific first), and the libraries' few read-only routes below.
 */
public final class AccessRules {
    private static final Set<Role> READERS = EnumSet.of(Role.VIEWER, Role.OPERATOR);
    /** Where only the api's own handlers live. */
    private static final String API = "/api/v1/";

    private static final PathPatternParser PARSER = PathPatternParser.defaultInstance;
    /**
     * Routes the libraries serve, which carry no {@link Access}: the OpenAPI document (springdoc) and the metrics
     * (actuator) are read-only.
     */
    private static final List<Route> LIBRARY_ROUTES = List.of(
            new Route(Set.of("GET"), PARSER.parse("/v3/api-docs"), READERS, false, "springdoc"),
            new Route(Set.of("GET"), PARSER.parse("/v3/api-docs/**"), READERS, false, "springdoc"),
            new Route(Set.of("GET"), PARSER.parse("/v3/api-docs.yaml"), READERS, false, "springdoc"),
            new Route(Set.of("GET"), PARSER.parse("/actuator/prometheus"), READERS, false, "actuator"));

    /** One route: its methods (empty: any), its path, the roles it admits, and the handler that declared it. */
    public record Route(Set<String> methods, PathPattern path, Set<Role> roles, boolean speaksForNode, String handler) {
        boolean admits(String method) {
            return methods.isEmpty() || methods.contains(method) || "HEAD".equals(method) && methods.contains("GET");
        }

        /** "GET /api/v1/clusters/{cluster}/deltas: agent, operator, viewer", for reviews and tests. */
        public String line() {
            return String.join(",", new TreeSet<>(methods)) + " " + path.getPatternString() + ": "
                    + String.join(", ", roles.stream().map(Role::id).sorted().toList())
                    + (speaksForNode ? " (speaks for its node)" : "");
        }
    }

    /** A request's route, and the variables its path gave ({@code cluster}, {@code node}). */
    public record Match(Route route, Map<String, String> variables) {
        public Set<Role> roles() {
            return route.roles();
        }
    }

    private final List<Route> routes;

    private AccessRules(List<Route> routes) {
        this.routes = List.copyOf(routes);
    }

    /** The routes of the api's handler methods (from its request mappings), then the libraries'. */
    public static AccessRules of(Map<RequestMappingInfo, HandlerMethod> handlers) {
        List<Route> routes = new ArrayList<>();
        handlers.forEach((info, handler) -> {
            if (!handler.getBeanType().getPackageName().startsWith("io.rulesync.")) {
                return; // a library's handler: LIBRARY_ROUTES, or operators only
            }
            Access access = handler.getMethodAnnotation(Access.class);
            Set<Role> roles =
                    access == null ? EnumSet.of(Role.OPERATOR) : EnumSet.of(access.value()[0], access.value());
            Set<String> methods = new TreeSet<>();
            for (RequestMethod m : info.getMethodsCondition().getMethods()) {
                methods.add(m.name());
            }
            if (info.getPathPatternsCondition() == null) {
                throw new IllegalStateException(handler + ": expected path patterns (the PathPatternParser)");
            }
            for (PathPattern p : info.getPathPatternsCondition().getPatterns()) {
                routes.add(new Route(
                        methods,
                        p,
                        roles,
                        access != null && access.speaksForNode(),
                        handler.getBeanType().getSimpleName() + "."
                                + handler.getMethod().getName()));
            }
        });
        routes.addAll(LIBRARY_ROUTES);
        return new AccessRules(routes);
    }

    public List<Route> routes() {
        return routes;
    }

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

    /** The route this request takes: the most specific that admits its method, as the dispatcher chooses. */
    public Optional<Match> match(String method, String path) {
        PathContainer container = PathContainer.parsePath(path);
        return routes.stream()
                .filter(r -> r.admits(method) && r.path().matches(container))
                .min(Comparator.comparing(Route::path, PathPattern.SPECIFICITY_COMPARATOR))
                .map(r -> new Match(r, r.path().matchAndExtract(container).getUriVariables()));
    }

    /** The roles allowed to make this request. */
    public Set<Role> allowed(String method, String path) {
        return allowed(match(method, path), path);
    }

    /** Why an agent's credential may not make this request; empty when it may (below). */
    public Optional<String> outOfScope(ApiTokens.Caller caller, String method, String path, String queryNode) {
        return outOfScope(caller, path, match(method, path), queryNode);
    }

    /**
     * The roles allowed to make this request: its route's. Where no route takes it: under {@code /api/v1/}, which is all
     * ours and all in the table, any role (the dispatcher answers 404 or 405, and serves nothing); elsewhere, where the
     * libraries' handlers live, operators only.
     */
    public static Set<Role> allowed(Optional<Match> match, String path) {
        return match.map(Match::roles)
                .orElse(path.startsWith(API) ? EnumSet.allOf(Role.class) : EnumSet.of(Role.OPERATOR));
    }

    /**
     * Why an agent's credential may not make this request; empty when it may. A credential bound to a cluster reads only
     * that cluster's rules, one bound to a node only that node's; an unbound one reads every cluster's. A route that
     * speaks for a node (an ack) takes only that node's own credential: not one bound to its cluster only, nor an
     * unbound one. {@code queryNode} is the request's {@code ?node=} (null without one); an ack names its node in the
     * path.
     */
    public static Optional<String> outOfScope(
            ApiTokens.Caller caller, String path, Optional<Match> match, String queryNode) {
        ApiTokens.Scope scope = caller.scope();
        Map<String, String> vars = match.map(Match::variables).orElse(Map.of());
        boolean forNode = match.isPresent() && match.get().route().speaksForNode();
        String cluster = vars.get("cluster");
        if (forNode && caller.role() == Role.AGENT && scope.node() == null) {
            return Optional.of("token '" + caller.name() + "' is not bound to a node: only node '" + vars.get("node")
                    + "''s own credential may acknowledge for it");
        }
        if (!scope.bound()) {
            return Optional.empty();
        }
        String node = forNode ? vars.get("node") : queryNode;
        if (!scope.cluster().equals(cluster)) {
            return Optional.of("token '" + caller.name() + "' is bound to cluster '" + scope.cluster()
                    + "'; it may not read " + (cluster == null ? path : "cluster '" + cluster + "'"));
        }
        if (scope.node() != null && !scope.node().equals(node)) {
            return Optional.of("token '" + caller.name() + "' is bound to node '" + scope.node() + "' of cluster '"
                    + scope.cluster()
                    + "'; it may not "
                    + (forNode
                            ? "acknowledge for node '" + node + "'"
                            : node == null ? "read every node's rules" : "read the rules of node '" + node + "'"));
        }
        return Optional.empty();
    }
}
