package io.rulesync.api.actions;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.ApiTokens.Caller;
import io.rulesync.api.access.BearerTokenFilter;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsLabel;
import io.rulesync.api.params.PageSize;
import io.rulesync.api.rollout.RolloutController;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.store.ActionConflictException;
import io.rulesync.store.NotificationStore;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RecordedAction;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.springframework.http.HttpStatus;
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
    private static final java.util.regex.Pattern NUMBER = java.util.regex.Pattern.compile("[1-9][0-9]{0,17}");
    private static final int MAX_LIMIT = 500;

    private final VersionHistory versions;
    private final OperatorActionStore actions;
    private final RolloutStore rollouts;
    private final NotificationStore notifications;
    private final String eventsTopic;
    private final Duration wait;
    private final Duration timeout;
    private final Clock clock;

    public ActionsController(
            VersionHistory versions,
            OperatorActionStore actions,
            RolloutStore rollouts,
            NotificationStore notifications,
            String eventsTopic,
            Duration wait,
            Duration timeout,
            Clock clock) {
        this.versions = versions;
        this.rollouts = rollouts;
        this.notifications = notifications;
        this.actions = actions;
        this.eventsTopic = eventsTopic;
        this.wait = wait;
        this.timeout = timeout;
        this.clock = clock;
    }

    /**
     * A rollback's body. The fields are taken as sent and checked by their constraints, not by
     * Jackson's coercions (which would make a version of "1" or 1.5); a field no request has is
     * refused by Jackson ({@code fail-on-unknown-properties}).
     */
    public record RollbackRequest(
            @Schema(
                    implementation = Long.class,
                    minimum = "1",
                    requiredMode = Schema.RequiredMode.REQUIRED,
                    description = "the version whose rules to publish again")
            @NotNull(message = "is required")
            @VersionNumber
            Object toVersion,

            @Schema(
                    type = "string",
                    requiredMode = Schema.RequiredMode.REQUIRED,
                    description = "why; kept in the audit")
            @Reason
            Object reason) {}

    /** A resume's body. */
    public record ResumeRequest(
            @Schema(
                    type = "string",
                    requiredMode = Schema.RequiredMode.REQUIRED,
                    description = "why; kept in the audit")
            @Reason
            Object reason) {}

    /**
     * One page of the audit log, and the link to the next (null on the last); the first page also holds the newest steps
     * of staged rollouts (waves opened, bakes, halts with their causes, automatic rollbacks, operators' promotes, pauses
     * and aborts; all of them at {@code /clusters/{c}/rollout}), and the newest notifications webhooks could not deliver.
     */
    public record AuditPage(
            List<ActionJson> actions,
            String next,
            @JsonInclude(JsonInclude.Include.NON_NULL) List<RolloutController.LogJson> rolloutSteps,
            @JsonInclude(JsonInclude.Include.NON_NULL) List<UndeliveredJson> undelivered) {}

    /** A notification a webhook receiver was not told, after every attempt (its destination without the URL's path). */
    public record UndeliveredJson(
            long id,
            long notification,
            String destination,
            String cluster,
            String kind,
            int attempts,
            String error,
            String failedAt) {
        static UndeliveredJson of(NotificationStore.Failure f) {
            return new UndeliveredJson(
                    f.id(),
                    f.notificationId(),
                    f.destination(),
                    f.cluster(),
                    f.kind(),
                    f.attempts(),
                    f.error(),
                    f.failedAt().toString());
        }
    }

    /** An operator action: who asked for what and why, and what came of it (toVersion only for a rollback). */
    public record ActionJson(
            long id,
            String cluster,
            String action,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long toVersion,
            String actor,
            String reason,
            String requestedAt,
            String status,
            Long version,
            String outcome,
            String completedAt) {}

    @Operation(summary = "Publish an earlier version's rules as a new version and pin the cluster (operator)")
    @Access(Role.OPERATOR)
    @PostMapping("/api/v1/clusters/{cluster}/rollback")
    public ResponseEntity<ActionJson> rollback(
            @PathVariable("cluster") String cluster,
            @RequestBody(required = false) @Valid @NotNull(message = "expected a JSON object with reason, toVersion")
                    RollbackRequest body,
            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller)
            throws InterruptedException {
        long head = ProblemResponses.knownHead(versions, cluster);
        long toVersion = ((Number) body.toVersion()).longValue();
        long oldest = versions.oldest(cluster);
        if (toVersion > head || toVersion < oldest) {
            throw ProblemResponses.noSuchVersion(cluster, toVersion, oldest, head, "toVersion");
        }
        expireOverdue(cluster);
        return request(cluster, toVersion, (String) body.reason(), caller);
    }

    @Operation(summary = "Publish the current state and unpin the cluster (operator)")
    @Access(Role.OPERATOR)
    @PostMapping("/api/v1/clusters/{cluster}/resume")
    public ResponseEntity<ActionJson> resume(
            @PathVariable("cluster") String cluster,
            @RequestBody(required = false) @Valid @NotNull(message = "expected a JSON object with reason")
                    ResumeRequest body,
            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller)
            throws InterruptedException {
        ProblemResponses.knownHead(versions, cluster);
        expireOverdue(cluster);
        if (versions.pinning(cluster).isEmpty() && actions.pendingOf(cluster).isEmpty()) {
            throw new ParameterProblem(
                    HttpStatus.CONFLICT,
                    "cluster",
                    "cluster '" + cluster + "' is not pinned: there is nothing to resume");
        }
        return request(cluster, null, (String) body.reason(), caller);
    }

    /** Operator actions, newest first (keyset pages: {@code ?before=ID&limit=N}), of one cluster or all. */
    @Operation(summary = "Operator actions, newest first: who, what, why, and what came of it")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/audit")
    public AuditPage audit(
            @RequestParam(name = "cluster", required = false) DnsLabel cluster,
            @RequestParam(name = "before", required = false)
                    @Pattern(regexp = "[1-9][0-9]{0,17}", message = "'%s' is not an action id")
                    String before,
            @RequestParam(name = "limit", required = false) @PageSize(max = MAX_LIMIT) String limit) {
        // Cluster ids are DNS-1123 labels (the fleet file's rule), like namespaces.
        String c = cluster == null ? null : cluster.name();
        int n = limit == null ? 50 : Integer.parseInt(limit);
        var page = actions.list(c, before == null ? Long.MAX_VALUE : Long.parseLong(before), n);
        return new AuditPage(
                page.stream().map(ActionsController::json).toList(),
                page.size() == n
                        ? "/api/v1/audit?"
                                + (c == null ? "" : "cluster=" + URLEncoder.encode(c, StandardCharsets.UTF_8) + "&")
                                + "before=" + page.get(page.size() - 1).id() + "&limit=" + n
                        : null,
                before == null
                        ? rollouts.log(c, 50).stream()
                                .map(RolloutController.LogJson::of)
                                .toList()
                        : null,
                before == null
                        ? notifications.failures(c, 50).stream()
                                .map(UndeliveredJson::of)
                                .toList()
                        : null);
    }

    /** An id that is not a number names no action either: 404, not 400. */
    @Operation(summary = "One operator action")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/audit/{id}")
    public ActionJson action(@PathVariable("id") String id) {
        Optional<RecordedAction> a = NUMBER.matcher(id).matches() ? actions.find(Long.parseLong(id)) : Optional.empty();
        return json(a.orElseThrow(() -> new ParameterProblem(
                HttpStatus.NOT_FOUND,
                "id",
                "id: there is no operator action '" + KubernetesNames.printable(id) + "'")));
    }

    /** An action the compiler did not carry out in time no longer blocks its cluster: it expires, with the reason. */
    private void expireOverdue(String cluster) {
        Instant now = clock.instant();
        actions.expire(cluster, now.minus(timeout), now, OperatorActionStore.expiredOutcome(timeout));
    }

    /** Records the request (the cluster's overdue action already expired by the caller) and waits for its outcome. */
    private ResponseEntity<ActionJson> request(String cluster, Long toVersion, String reason, Caller caller)
            throws InterruptedException {
        long id;
        try {
            id = actions.request(cluster, toVersion, caller.name(), reason, clock.instant(), eventsTopic);
        } catch (ActionConflictException e) {
            ParameterProblem problem = new ParameterProblem(HttpStatus.CONFLICT, "cluster", e.getMessage())
                    .with("pendingAction", "/api/v1/audit/" + e.pendingId());
            actions.find(e.pendingId())
                    .ifPresent(a -> problem.with(
                            "expiresAt", a.requestedAt().plus(timeout).toString()));
            throw problem;
        }
        Instant deadline = clock.instant().plus(wait);
        RecordedAction a = actions.find(id).orElseThrow();
        while (a.pending() && clock.instant().isBefore(deadline)) {
            Thread.sleep(20);
            a = actions.find(id).orElseThrow();
        }
        if ("rejected".equals(a.status())) {
            throw new ParameterProblem(HttpStatus.CONFLICT, "cluster", a.outcome())
                    .with("action", "/api/v1/audit/" + id);
        }
        // Done: the version exists. Still pending: accepted, and the audit entry says when it completes.
        return ResponseEntity.status(a.pending() ? HttpStatus.ACCEPTED : HttpStatus.OK)
                .location(URI.create("/api/v1/audit/" + id))
                .body(json(a));
    }

    static ActionJson json(RecordedAction a) {
        return new ActionJson(
                a.id(),
                a.cluster(),
                a.action(),
                a.toVersion(),
                a.actor(),
                a.reason(),
                a.requestedAt().toString(),
                a.status(),
                a.resultVersion(),
                a.outcome(),
                a.completedAt() == null ? null : a.completedAt().toString());
    }
}
