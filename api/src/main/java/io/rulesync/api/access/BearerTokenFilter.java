package io.rulesync.api.access;

import io.rulesync.api.access.ApiTokens.Caller;
import io.rulesync.api.errors.FilterProblems;
import io.rulesync.model.text.Printable;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Every request but a health probe needs {@code Authorization: Bearer TOKEN} of a configured token
 * whose role the route's {@link Access} allows ({@link AccessRules}): 401 without one (or with an unknown one), 403 with the
 * wrong role, or (an agent token bound to a cluster or node) for another cluster's or node's rules, 429 when the
 * address failed too often or the caller writes too often. The caller is left in the request attribute {@link #CALLER}
 * for the audit log. Who the caller is, and what a failure costs, is {@link Authentication}'s, as for node streams.
 */
public final class BearerTokenFilter extends OncePerRequestFilter {
    /** Request attribute holding the authenticated {@link Caller}. */
    public static final String CALLER = "rulesync.caller";

    private static final Logger log = LoggerFactory.getLogger(BearerTokenFilter.class);

    private final Authentication authentication;
    private final RateLimits limits;
    private final Supplier<AccessRules> rules;

    /** @param rules the routes' access, read from the handler mappings once they exist (the first request) */
    public BearerTokenFilter(Authentication authentication, RateLimits limits, Supplier<AccessRules> rules) {
        this.authentication = authentication;
        this.limits = limits;
        this.rules = rules;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        // The container's decoded, normalised path without ;parameters: what the controllers are matched
        // against. The raw URI would let "/versions;x/snapshot" pass as a snapshot request.
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        String method = request.getMethod();
        if (AccessRules.isPublic(method, path)) {
            chain.doFilter(request, response);
            return;
        }
        Authentication.Outcome outcome =
                authentication.authenticate(request.getHeader("Authorization"), request.getRemoteAddr(), method, path);
        Caller caller = outcome.caller();
        if (caller == null) {
            switch (outcome.refusal()) {
                case TOO_MANY_FAILURES ->
                    tooMany(
                            response,
                            outcome.retryAfter(),
                            "too many failed authentications from " + request.getRemoteAddr() + "; try again later");
                case NO_BEARER_TOKEN ->
                    refuse(response, HttpStatus.UNAUTHORIZED, "this request needs 'Authorization: Bearer TOKEN'");
                case NOT_VALID -> refuse(response, HttpStatus.UNAUTHORIZED, Authentication.NOT_VALID);
            }
            return;
        }
        Optional<AccessRules.Match> route = rules.get().match(method, path);
        Set<Role> allowed = AccessRules.allowed(route, path);
        if (!allowed.contains(caller.role())) {
            // The path is the caller's input (decoded): escaped, so that %0A cannot forge a log line.
            log.info(
                    "refused {} {} to {} (role {})",
                    Printable.escape(method),
                    Printable.escape(path),
                    caller.name(),
                    caller.role().id());
            refuse(
                    response,
                    HttpStatus.FORBIDDEN,
                    "token '" + caller.name() + "' has role " + caller.role().id() + "; " + method + " " + path
                            + " needs "
                            + allowed.stream().map(Role::id).sorted().collect(Collectors.joining(" or ")));
            return;
        }
        // ?node= is read only for a token bound to a node: reading parameters here parses the query, which would take
        // the
        // refusal of a malformed one (DeclaredParameters, with the parameter named) away from everyone else.
        String node = caller.scope().node() == null ? null : request.getParameter("node");
        Optional<String> outOfScope = AccessRules.outOfScope(caller, path, route, node);
        if (outOfScope.isPresent()) {
            log.info(
                    "refused {} {} to {}: {}",
                    Printable.escape(method),
                    Printable.escape(path),
                    caller.name(),
                    Printable.escape(outOfScope.get()));
            refuse(response, HttpStatus.FORBIDDEN, outOfScope.get());
            return;
        }
        if (!("GET".equals(method) || "HEAD".equals(method))) {
            Duration wait = limits.write(caller.name());
            if (!wait.isZero()) {
                tooMany(
                        response,
                        wait,
                        "token '" + caller.name() + "' writes more often than the api takes; try again later");
                return;
            }
        }
        request.setAttribute(CALLER, caller);
        chain.doFilter(request, response);
    }

    private static void tooMany(HttpServletResponse response, Duration wait, String detail) throws IOException {
        response.setHeader("Retry-After", RateLimits.retryAfter(wait));
        FilterProblems.write(response, HttpStatus.TOO_MANY_REQUESTS, detail);
    }

    private static void refuse(HttpServletResponse response, HttpStatus status, String detail) throws IOException {
        if (status == HttpStatus.UNAUTHORIZED) {
            response.setHeader("WWW-Authenticate", "Bearer realm=\"rulesync\"");
        }
        FilterProblems.write(response, status, detail);
    }
}
