package io.rulesync.api.rollout;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.ApiTokens.Caller;
import io.rulesync.api.access.BearerTokenFilter;
import io.rulesync.api.access.Role;
import io.rulesync.api.actions.Reason;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.nodes.Convergence;
import io.rulesync.store.NodeProgress;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A cluster's staged rollout: {@code GET /api/v1/clusters/{c}/rollout} (where it stands, wave by wave, and its log),
 * {@code PUT .../rollout/policy} (set or, with {@code "policy": null}, remove the policy), and {@code POST
 * .../rollout/promote}, {@code pause} and {@code abort}; the last four are operators', each with a reason, logged.
 */
@RestController
public class RolloutController {
    private final Rollouts rollouts;
    private final RolloutStore store;
    private final VersionHistory versions;
    private final NodeStatusStore acks;
    private final Clock clock;

    public RolloutController(
            Rollouts rollouts, RolloutStore store, VersionHistory versions, NodeStatusStore acks, Clock clock) {
        this.rollouts = rollouts;
        this.store = store;
        this.versions = versions;
        this.acks = acks;
        this.clock = clock;
    }

    /** A policy change: the policy as {@link RolloutPolicy#from} reads it, or null to remove it. */
    public record PolicyRequest(
            Map<String, Object> policy,

            @Schema(
                    type = "string",
                    requiredMode = Schema.RequiredMode.REQUIRED,
                    description = "why; kept in the rollout's log")
            @Reason
            Object reason) {}

    /** An operator's step. */
    public record StepRequest(
            @Schema(
                    type = "string",
                    requiredMode = Schema.RequiredMode.REQUIRED,
                    description = "why; kept in the rollout's log")
            @Reason
            Object reason) {}

    /** One wave: its nodes by state against the version rolling out. */
    public record WaveJson(
            String name, boolean open, long bakeSeconds, int nodes, int converged, int behind, int failed) {}

    /** One step of a rollout, as the log, the audit and the version history show it. */
    public record LogJson(
            long id,
            String cluster,
            long version,
            String at,
            String event,
            @JsonInclude(JsonInclude.Include.NON_NULL) String wave,
            String actor,
            String detail) {
        public static LogJson of(RolloutStore.Entry e) {
            return new LogJson(
                    e.id(), e.cluster(), e.version(), e.at().toString(), e.event(), e.wave(), e.actor(), e.detail());
        }
    }

    /** Where a rollout stands; every field but {@code cluster} and {@code state} is absent without a policy. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record RolloutJson(
            String cluster,
            String state,
            Long version,
            Long stable,
            String wave,
            Long bakeLeftSeconds,
            String cause,
            String startedAt,
            Map<String, Object> policy,
            String policySetBy,
            List<WaveJson> waves,
            List<LogJson> log) {}

    @Operation(
            summary =
                    "Where the cluster's staged rollout stands: the version going out, each wave's nodes, the time left to bake")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/rollout")
    public RolloutJson rollout(@PathVariable("cluster") String cluster) {
        long head = ProblemResponses.knownHead(versions, cluster);
        Optional<RolloutStore.StoredPolicy> sp = store.policy(cluster);
        List<LogJson> log = store.log(cluster, 50).stream().map(LogJson::of).toList();
        if (sp.isEmpty()) {
            return new RolloutJson(cluster, "none", null, null, null, null, null, null, null, null, null, log);
        }
        RolloutPolicy policy = RolloutPolicy.fromJson(sp.get().json());
        Optional<Rollout> stored = store.rollout(cluster).map(Rollouts::of);
        if (stored.isEmpty()) {
            return new RolloutJson(
                    cluster,
                    "starting",
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    policy.toMap(),
                    sp.get().setBy(),
                    null,
                    log);
        }
        Rollout r = stored.get().within(policy.waves().size());
        Waves waves =
                Waves.assign(policy, cluster, rollouts.zones(cluster, r.version()), rollouts.labels(cluster, policy));
        Map<String, NodeProgress> progress = new HashMap<>();
        acks.progress(cluster).forEach(p -> progress.put(p.node(), p));
        List<WaveJson> ws = new ArrayList<>();
        for (int i = 0; i < waves.count(); i++) {
            // As GET /nodes counts them, against the version rolling out; a node that never acked is behind.
            Map<Convergence.State, Integer> counts = new EnumMap<>(Convergence.State.class);
            waves.nodes(i)
                    .forEach(n -> counts.merge(Convergence.stateOf(r.version(), progress.get(n)), 1, Integer::sum));
            int all = waves.nodes(i).size();
            int converged = counts.getOrDefault(Convergence.State.CONVERGED, 0);
            int failed = counts.getOrDefault(Convergence.State.FAILED, 0);
            ws.add(new WaveJson(
                    policy.waves().get(i).name(),
                    r.state() == Rollout.State.COMPLETE || i <= r.wave(),
                    policy.waves().get(i).bake().toSeconds(),
                    all,
                    converged,
                    all - converged - failed,
                    failed));
        }
        Instant now = clock.instant();
        return new RolloutJson(
                cluster,
                r.state().name().toLowerCase(Locale.ROOT),
                r.version(),
                r.stable(),
                policy.waves().get(r.wave()).name(),
                RolloutStep.bakeLeft(r, policy, now).toSeconds(),
                r.cause(),
                r.startedAt().toString(),
                policy.toMap(),
                sp.get().setBy(),
                ws,
                log);
    }

    @Operation(summary = "Set the cluster's rollout policy, or remove it with \"policy\": null (operator)")
    @Access(Role.OPERATOR)
    @PutMapping("/api/v1/clusters/{cluster}/rollout/policy")
    public RolloutJson policy(
            @PathVariable("cluster") String cluster,
            @RequestBody(required = false) @Valid @NotNull(message = "expected a JSON object with policy, reason")
                    PolicyRequest body,
            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        long head = ProblemResponses.knownHead(versions, cluster);
        String json = null;
        if (body.policy() != null) {
            try {
                json = RolloutPolicy.from(body.policy()).toJson();
            } catch (IllegalArgumentException e) {
                throw new ParameterProblem(HttpStatus.BAD_REQUEST, "policy", "policy." + e.getMessage());
            }
        }
        store.setPolicy(cluster, json, caller.name(), (String) body.reason(), head, clock.instant());
        rollouts.tick();
        return rollout(cluster);
    }

    @Operation(
            summary =
                    "An operator's step: promote (open the next wave now, skipping the rest of the bake, or resume a paused "
                            + "rollout), pause (no further wave opens until promoted) or abort (halt it where it is: the nodes that have the version "
                            + "keep it, the rest keep theirs)")
    @Access(Role.OPERATOR)
    @PostMapping("/api/v1/clusters/{cluster}/rollout/{step}")
    public RolloutJson step(
            @PathVariable("cluster") String cluster,
            @PathVariable("step")
                    @Pattern(regexp = "promote|pause|abort", message = "'%s' is not promote, pause or abort")
                    String step,
            @RequestBody(required = false) @Valid @NotNull(message = "expected a JSON object with reason")
                    StepRequest body,
            @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        ProblemResponses.knownHead(versions, cluster);
        try {
            rollouts.operator(cluster, step, caller.name(), (String) body.reason());
        } catch (Rollouts.RefusedException e) {
            throw new ParameterProblem(HttpStatus.CONFLICT, "cluster", e.getMessage());
        }
        return rollout(cluster);
    }
}
