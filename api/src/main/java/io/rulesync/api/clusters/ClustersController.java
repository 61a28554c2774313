package io.rulesync.api.clusters;

import io.rulesync.api.nodes.Convergence;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.ProblemStore;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/clusters}: every cluster with its newest version, whether a rollback pins it
 * (and who pinned it, why), how many of its acknowledging nodes are converged, behind or failing (nodes that never acknowledged are listed by
 * {@code /clusters/{c}/nodes}), how many objects its watcher refuses now ({@code /clusters/{c}/problems} says which), and
 * where its staged rollout stands, if it has a policy ({@code /clusters/{c}/rollout} says more).
 */
@RestController
public class ClustersController {
    private final VersionHistory versions;
    private final NodeStatusStore acks;
    private final ProblemStore problems;
    private final RolloutStore rollouts;

    public ClustersController(VersionHistory versions, NodeStatusStore acks, ProblemStore problems, RolloutStore rollouts) {
        this.versions = versions;
        this.acks = acks;
        this.problems = problems;
        this.rollouts = rollouts;
    }

    public record Clusters(List<ClusterJson> clusters) {
    }

    /** @param nodes acknowledging nodes per state: converged, behind, failed */
    public record ClusterJson(String cluster, long version, String createdAt, Pin pinned, Map<String, Integer> nodes, int refusedObjects,
            RolloutState rollout) {
    }

    /** A cluster's staged rollout: the version going out (or gone out), its state, and the newest wave opened. */
    public record RolloutState(String state, long version, long stable, int wave, String cause, String details) {
    }

    /** The rollback that pins the cluster. */
    public record Pin(Long toVersion, String byAction, String actor, String reason, String since) {
    }

    @Operation(summary = "Every cluster: newest version, pinned or not, node counts")
    @GetMapping("/api/v1/clusters")
    public Clusters clusters() {
        Map<String, Integer> refused = problems.refusedObjects();
        Set<String> withPolicy = rollouts.policies().keySet();
        List<ClusterJson> out = versions.heads().entrySet().stream().map(e -> {
            // Counts need only each node's state, not its lag (which would cost a query per lagging node).
            Map<Convergence.State, Integer> counts = new EnumMap<>(Convergence.State.class);
            for (Convergence.State s : List.of(Convergence.State.CONVERGED, Convergence.State.BEHIND, Convergence.State.FAILED)) {
                counts.put(s, 0);
            }
            acks.progress(e.getKey()).forEach(s -> counts.merge(Convergence.stateOf(e.getValue(), s), 1, Integer::sum));
            Map<String, Integer> nodes = new LinkedHashMap<>();
            counts.forEach((s, n) -> nodes.put(s.name().toLowerCase(Locale.ROOT), n));
            return new ClusterJson(e.getKey(), e.getValue(),
                    versions.version(e.getKey(), e.getValue()).map(v -> v.createdAt().toString()).orElse(null),
                    versions.pinning(e.getKey()).map(a -> new Pin(a.toVersion(), "/api/v1/audit/" + a.id(), a.actor(), a.reason(),
                            a.completedAt().toString())).orElse(null),
                    nodes, refused.getOrDefault(e.getKey(), 0), withPolicy.contains(e.getKey()) ? rollouts.rollout(e.getKey())
                            .map(r -> new RolloutState(r.state(), r.version(), r.stable(), r.wave(), r.cause(), "/api/v1/clusters/"
                                    + e.getKey() + "/rollout")).orElse(null) : null);
        }).toList();
        return new Clusters(out);
    }
}
