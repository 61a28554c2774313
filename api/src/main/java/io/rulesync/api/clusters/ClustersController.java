package io.rulesync.api.clusters;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
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
import org.springframework.web.bind.annotation.PathVariable;
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

    public ClustersController(
            VersionHistory versions, NodeStatusStore acks, ProblemStore problems, RolloutStore rollouts) {
        this.versions = versions;
        this.acks = acks;
        this.problems = problems;
        this.rollouts = rollouts;
    }

    public record Clusters(List<ClusterJson> clusters) {}

    /** @param nodes acknowledging nodes per state: converged, behind, failed */
    public record ClusterJson(
            String cluster,
            long version,
            String createdAt,
            Pin pinned,
            Map<String, Integer> nodes,
            int refusedObjects,
            RolloutState rollout) {}

    /** A cluster's staged rollout: the version going out (or gone out), its state, and the newest wave opened. */
    public record RolloutState(String state, long version, long stable, int wave, String cause, String details) {}

    /** The rollback that pins the cluster. */
    public record Pin(Long toVersion, String byAction, String actor, String reason, String since) {}

    @Operation(summary = "Every cluster: newest version, pinned or not, node counts")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters")
    public Clusters clusters() {
        Map<String, Integer> refused = problems.refusedObjects();
        Set<String> withPolicy = rollouts.policies().keySet();
        return new Clusters(versions.heads().entrySet().stream()
                .map(e -> summary(e.getKey(), e.getValue(), refused, withPolicy))
                .toList());
    }

    /** One cluster's line of {@link #clusters}: what a page about one cluster needs, without reading the fleet. */
    @Operation(summary = "One cluster: newest version, pinned or not, node counts, refused objects, rollout")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}")
    public ClusterJson cluster(@PathVariable("cluster") String cluster) {
        long head = ProblemResponses.knownHead(versions, cluster);
        return summary(
                cluster,
                head,
                problems.refusedObjects(),
                rollouts.policy(cluster).isPresent() ? Set.of(cluster) : Set.of());
    }

    private ClusterJson summary(String cluster, long head, Map<String, Integer> refused, Set<String> withPolicy) {
        // Counts need only each node's state, not its lag (which would cost a query per lagging node).
        Map<Convergence.State, Integer> counts = new EnumMap<>(Convergence.State.class);
        for (Convergence.State s :
                List.of(Convergence.State.CONVERGED, Convergence.State.BEHIND, Convergence.State.FAILED)) {
            counts.put(s, 0);
        }
        acks.progress(cluster).forEach(s -> counts.merge(Convergence.stateOf(head, s), 1, Integer::sum));
        Map<String, Integer> nodes = new LinkedHashMap<>();
        counts.forEach((s, n) -> nodes.put(s.name().toLowerCase(Locale.ROOT), n));
        return new ClusterJson(
                cluster,
                head,
                versions.version(cluster, head)
                        .map(v -> v.createdAt().toString())
                        .orElse(null),
                versions.pinning(cluster)
                        .map(a -> new Pin(
                                a.toVersion(),
                                "/api/v1/audit/" + a.id(),
                                a.actor(),
                                a.reason(),
                                a.completedAt().toString()))
                        .orElse(null),
                nodes,
                refused.getOrDefault(cluster, 0),
                withPolicy.contains(cluster)
                        ? rollouts.rollout(cluster)
                                .map(r -> new RolloutState(
                                        r.state(),
                                        r.version(),
                                        r.stable(),
                                        r.wave(),
                                        r.cause(),
                                        "/api/v1/clusters/" + cluster + "/rollout"))
                                .orElse(null)
                        : null);
    }
}
