package io.rulesync.api.actions;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.ApiTokens.Caller;
import io.rulesync.api.access.BearerTokenFilter;
import io.rulesync.store.ActionConflictException;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RecordedAction;
import io.rulesync.store.VersionHistory;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.ClusterEvent.OperatorAction;
import io.swagger.v3.oas.annotations.Operation;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Rollback and resume, and the audit log of operator actions.
 *
 * <p>The api does not change versions itself: it records the request (with who and why) and queues
 * it on the cluster's partition of the events topic, so the compiler, the only writer of versions,
 * carries it out in order with the watched changes. The request then waits (a few seconds) for the
 * outcome: 200 with the version it produced, 409 when the compiler refused it, or 202 with the
 * audit entry to poll when the compiler is slow or down. A request no compiler carried out within the
 * action timeout expires (the compiler sweeps them; a new request of the same cluster expires its
 * overdue one first), so a lost request never blocks the cluster for good.
 */
@RestController
public class ActionsController {
    private static final Pattern NUMBER = Pattern.compile("[1-9][0-9]{0,17}");
    private static final int MAX_LIMIT = 500;

    private final VersionHistory versions;
    private final OperatorActionStore actions;
    private final String eventsTopic;
    private final Duration wait;
    private final Duration timeout;
    private final Clock clock;

    public ActionsController(VersionHistory versions, OperatorActionStore actions, String eventsTopic, Duration wait, Duration timeout,
            Clock clock) {
        this.versions = versions;
        this.actions = actions;
        this.eventsTopic = eventsTopic;
        this.wait = wait;
        this.timeout = timeout;
        this.clock = clock;
    }

    /** Body: {@code {"toVersion": N, "reason": "..."}}. */
    @Operation(summary = "Publish an earlier version's rules as a new version and pin the cluster (operator)")
    @PostMapping("/api/v1/clusters/{cluster}/rollback")
    public ResponseEntity<?> rollback(@PathVariable("cluster") String cluster, @RequestBody(required = false) Map<String, Object> body,
            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) throws InterruptedException {
        long head = versions.head(cluster);
        if (head == 0) {
            return ProblemResponses.unknownCluster(cluster);
        }
        Object checked = check(body, Set.of("toVersion", "reason"));
        if (checked instanceof ResponseEntity<?> problem) {
            return problem;
        }
        Object to = body.get("toVersion");
        if (!(to instanceof Integer || to instanceof Long) || ((Number) to).longValue() < 1) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "toVersion", "toVersion: " + (to == null ? "is required"
                    : "'" + KubernetesNames.printable(String.valueOf(to)) + "' is not a version number (a whole number from 1)"));
        }
        long toVersion = ((Number) to).longValue();
        if (toVersion > head) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, "toVersion", "toVersion: cluster '" + cluster + "' has no version "
                    + toVersion + " (its versions are 1-" + head + ")");
        }
        expireOverdue(cluster);
        return request(cluster, toVersion, (String) body.get("reason"), caller);
    }

    /** Body: {@code {"reason": "..."}}. */
    @Operation(summary = "Publish the current state and unpin the cluster (operator)")
    @PostMapping("/api/v1/clusters/{cluster}/resume")
    public ResponseEntity<?> resume(@PathVariable("cluster") String cluster, @RequestBody(required = false) Map<String, Object> body,
            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) throws InterruptedException {
        if (versions.head(cluster) == 0) {
            return ProblemResponses.unknownCluster(cluster);
        }
        Object checked = check(body, Set.of("reason"));
        if (checked instanceof ResponseEntity<?> problem) {
            return problem;
        }
        expireOverdue(cluster);
        if (versions.pinning(cluster).isEmpty() && actions.pendingOf(cluster).isEmpty()) {
            return ProblemResponses.about(HttpStatus.CONFLICT, "cluster", "cluster '" + cluster
                    + "' is not pinned: there is nothing to resume");
        }
        return request(cluster, null, (String) body.get("reason"), caller);
    }

    /** Operator actions, newest first (keyset pages: {@code ?before=ID&limit=N}), of one cluster or all. */
    @Operation(summary = "Operator actions, newest first: who, what, why, and what came of it")
    @GetMapping("/api/v1/audit")
    public ResponseEntity<?> audit(@RequestParam(name = "cluster", required = false) String cluster,
            @RequestParam(name = "before", required = false) String before, @RequestParam(name = "limit", required = false) String limit) {
        // Cluster ids are DNS-1123 labels (the fleet file's rule), like namespaces.
        if (cluster != null && KubernetesNames.checkNamespace(cluster) != null) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "cluster", "cluster: " + KubernetesNames.checkNamespace(cluster));
        }
        if (before != null && !NUMBER.matcher(before).matches()) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "before", "before: '" + KubernetesNames.printable(before)
                    + "' is not an action id");
        }
        if (limit != null && (!NUMBER.matcher(limit).matches() || limit.length() > 3 || Integer.parseInt(limit) > MAX_LIMIT)) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "limit", "limit: '" + KubernetesNames.printable(limit)
                    + "' is not 1-" + MAX_LIMIT);
        }
        int n = limit == null ? 50 : Integer.parseInt(limit);
        var page = actions.list(cluster, before == null ? Long.MAX_VALUE : Long.parseLong(before), n);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("actions", page.stream().map(ActionsController::json).toList());
        out.put("next", page.size() == n ? "/api/v1/audit?" + (cluster == null ? "" : "cluster="
                + URLEncoder.encode(cluster, StandardCharsets.UTF_8) + "&") + "before="
                + page.get(page.size() - 1).id() + "&limit=" + n : null);
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(out);
    }

    @Operation(summary = "One operator action")
    @GetMapping("/api/v1/audit/{id}")
    public ResponseEntity<?> action(@PathVariable("id") String id) {
        Optional<RecordedAction> a = NUMBER.matcher(id).matches() ? actions.find(Long.parseLong(id)) : Optional.empty();
        if (a.isEmpty()) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, "id", "id: there is no operator action '" + KubernetesNames.printable(id) + "'");
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(json(a.get()));
    }

    /** An action the compiler did not carry out in time no longer blocks its cluster: it expires, with the reason. */
    private void expireOverdue(String cluster) {
        Instant now = clock.instant();
        actions.expire(cluster, now.minus(timeout), now, OperatorActionStore.expiredOutcome(timeout));
    }

    /** Records the request (the cluster's overdue action already expired by the caller) and waits for its outcome. */
    private ResponseEntity<?> request(String cluster, Long toVersion, String reason, Caller caller) throws InterruptedException {
        long id;
        try {
            id = actions.request(cluster, toVersion, caller.name(), reason, clock.instant(), eventsTopic);
        } catch (ActionConflictException e) {
            ResponseEntity<ProblemDetail> problem = ProblemResponses.about(HttpStatus.CONFLICT, "cluster", e.getMessage());
            problem.getBody().setProperty("pendingAction", "/api/v1/audit/" + e.pendingId());
            actions.find(e.pendingId()).ifPresent(a -> problem.getBody().setProperty("expiresAt", a.requestedAt().plus(timeout).toString()));
            return problem;
        }
        Instant deadline = clock.instant().plus(wait);
        RecordedAction a = actions.find(id).orElseThrow();
        while (a.pending() && clock.instant().isBefore(deadline)) {
            Thread.sleep(20);
            a = actions.find(id).orElseThrow();
        }
        if ("rejected".equals(a.status())) {
            ResponseEntity<ProblemDetail> problem = ProblemResponses.about(HttpStatus.CONFLICT, "cluster", a.outcome());
            problem.getBody().setProperty("action", "/api/v1/audit/" + id);
            return problem;
        }
        // Done: the version exists. Still pending: accepted, and the audit entry says when it completes.
        return ResponseEntity.status(a.pending() ? HttpStatus.ACCEPTED : HttpStatus.OK).location(URI.create("/api/v1/audit/" + id))
                .contentType(MediaType.APPLICATION_JSON).body(json(a));
    }

    /** The body's fields are known and the reason is usable, or the problem saying which field is not. */
    private static Object check(Map<String, Object> body, Set<String> fields) {
        if (body == null) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "body", "body: expected a JSON object with " + String.join(", ", fields.stream().sorted().toList()));
        }
        for (String k : body.keySet()) {
            if (!fields.contains(k)) {
                return ProblemResponses.about(HttpStatus.BAD_REQUEST, k, k + ": is not a field of this request (expected "
                        + String.join(", ", fields.stream().sorted().toList()) + ")");
            }
        }
        Object reason = body.get("reason");
        String problem = reason instanceof String s ? OperatorAction.checkReason(s) : "must say why (a non-empty text)";
        return problem == null ? null : ProblemResponses.about(HttpStatus.BAD_REQUEST, "reason", "reason: " + problem);
    }

    static Map<String, Object> json(RecordedAction a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", a.id());
        m.put("cluster", a.cluster());
        m.put("action", a.action());
        if (a.toVersion() != null) {
            m.put("toVersion", a.toVersion());
        }
        m.put("actor", a.actor());
        m.put("reason", a.reason());
        m.put("requestedAt", a.requestedAt().toString());
        m.put("status", a.status());
        m.put("version", a.resultVersion());
        m.put("outcome", a.outcome());
        m.put("completedAt", a.completedAt() == null ? null : a.completedAt().toString());
        return m;
    }
}
