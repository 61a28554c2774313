package io.rulesync.api.access;

import java.util.EnumSet;
import java.util.Set;

/**
 * Which roles may make which request. Deny by default: a route not named here is operator-only,
 * so a new endpoint is never readable by an agent token by accident.
 */
public final class AccessRules {
    private static final Set<Role> READERS = EnumSet.of(Role.VIEWER, Role.OPERATOR);

    private AccessRules() {
    }

    /** Health probes answer without a token: kubelets and load balancers carry none, and they say only UP/DOWN. */
    public static boolean isPublic(String method, String path) {
        return "GET".equals(method) && (path.equals("/actuator/health") || path.startsWith("/actuator/health/"));
    }

    /** The roles allowed to make this request. */
    public static Set<Role> allowed(String method, String path) {
        boolean read = "GET".equals(method) || "HEAD".equals(method);
        if (read && path.startsWith("/api/v1/clusters/") && path.endsWith("/snapshot")) {
            return EnumSet.of(Role.AGENT, Role.VIEWER, Role.OPERATOR);
        }
        if (read && (path.startsWith("/api/v1/") || path.startsWith("/v3/api-docs") || path.equals("/actuator/prometheus"))) {
            return READERS;
        }
        return EnumSet.of(Role.OPERATOR);
    }
}
