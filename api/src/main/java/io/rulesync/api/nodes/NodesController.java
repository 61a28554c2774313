package io.rulesync.api.nodes;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.params.PageSize;
import io.rulesync.store.NodeProgress;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Schema;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/clusters/{cluster}/nodes}: per node, the version it runs, its state, lag in
 * versions and seconds (since the first version it lacks was made), its last ack and last error.
 */
@RestController
public class NodesController {
    private static final int DEFAULT_LIMIT = 500;
    private static final int MAX_LIMIT = 5000;
    private final VersionHistory versions;
    private final NodeStatusStore acks;
    private final Clock clock;
    private final Cache<String, Set<String>> nodeSets =
            Caffeine.newBuilder().maximumSize(16).build();

    public NodesController(VersionHistory versions, NodeStatusStore acks, Clock clock) {
        this.versions = versions;
        this.acks = acks;
        this.clock = clock;
    }

    /**
     * Nodes in name order, one page at a time ({@code ?after=NAME&limit=N}, default 500, at most
     * 5000), optionally of one {@code state}; {@code counts} always covers the whole cluster.
     */
    @Operation(summary = "Which node runs which version: state, lag, last ack, last error")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/nodes")
    public NodesPage nodes(
            @PathVariable("cluster") String cluster,
            @RequestParam(name = "state", required = false)
                    @Parameter(
                            schema =
                                    @Schema(
                                            type = "string",
                                            allowableValues = {"converged", "behind", "failed", "unknown"}))
                    Convergence.State only,
            @RequestParam(name = "after", required = false) String after,
            @RequestParam(name = "limit", required = false) @PageSize(max = MAX_LIMIT) String limit) {
        long head = versions.head(cluster);
        if (head == 0) {
            throw ProblemResponses.unknownCluster(cluster);
        }
        int n = limit == null ? DEFAULT_LIMIT : Integer.parseInt(limit);
        Set<String> headNodes = headNodes(cluster, head);
        List<NodeProgress> statuses = acks.progress(cluster);
        // Lag needs the creation time of the version after each behind node's: one query for all of them.
        Set<Long> needed = new TreeSet<>();
        statuses.stream().filter(st -> st.running() < head).forEach(st -> needed.add(st.running() + 1));
        needed.add(1L);
        Map<Long, Instant> created = versions.createdAt(cluster, needed);
        List<Convergence.NodeState> states =
                Convergence.of(head, headNodes, statuses, v -> created.getOrDefault(v, Instant.EPOCH), clock.instant());
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (Convergence.State st : Convergence.State.values()) {
            counts.put(st.name().toLowerCase(Locale.ROOT), 0);
        }
        states.forEach(st -> counts.merge(st.state().name().toLowerCase(Locale.ROOT), 1, Integer::sum));
        List<Convergence.NodeState> page = states.stream()
                .filter(st -> only == null || st.state() == only)
                .filter(st -> after == null || st.node().compareTo(after) > 0)
                .limit(n + 1L)
                .toList();
        List<Convergence.NodeState> shown = page.stream().limit(n).toList();
        Map<String, NodeStatus> lastAcks = new HashMap<>();
        acks.nodeStatus(cluster, shown.stream().map(Convergence.NodeState::node).toList())
                .forEach(a -> lastAcks.put(a.node(), a));
        return new NodesPage(
                cluster,
                head,
                counts,
                shown.stream().map(st -> json(st, lastAcks.get(st.node()))).toList(),
                page.size() > n
                        ? "/api/v1/clusters/" + URLEncoder.encode(cluster, StandardCharsets.UTF_8) + "/nodes?"
                                + (only == null ? "" : "state=" + only.name().toLowerCase(Locale.ROOT) + "&") + "after="
                                + URLEncoder.encode(page.get(n - 1).node(), StandardCharsets.UTF_8) + "&limit=" + n
                        : null);
    }

    /** A version's node set never changes: kept for the few newest (cluster, version) pairs asked about. */
    private Set<String> headNodes(String cluster, long head) {
        String key = cluster + "\n" + head;
        Set<String> known = nodeSets.getIfPresent(key);
        if (known != null) {
            return known;
        }
        // Read outside the cache's lock, as before: two requests may both read, never wait on each other.
        Set<String> nodes = Set.copyOf(versions.nodes(cluster, head).keySet());
        nodeSets.put(key, nodes);
        return nodes;
    }

    /** The answer: counts cover the whole cluster, nodes one page of it. */
    public record NodesPage(
            String cluster, long version, Map<String, Integer> counts, List<NodeJson> nodes, String next) {}

    /** One node in the answer (records, not maps: 5,000 of them are encoded per full page). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record NodeJson(
            String node,
            String state,
            boolean inCluster,
            long running,
            long behindVersions,
            long lagSeconds,
            LastAck lastAck,
            LastError lastError) {}

    /**
     * The newest ack. {@code at} is when the api received it, by the api's clock; {@code nodeAt} is what the node's clock
     * said, shown for display only (a node whose clock is off shows both).
     */
    public record LastAck(
            long version, String status, String at, String nodeAt, long durationMs, int ruleCount, String mode) {}

    public record LastError(String message, Long version, String at) {}

    private static NodeJson json(Convergence.NodeState s, NodeStatus a) {
        LastAck ack = a == null
                ? null
                : new LastAck(
                        a.lastVersion(),
                        a.lastStatus().name(),
                        a.updatedAt().toString(),
                        a.ackedAt().toString(),
                        a.durationMs(),
                        a.ruleCount(),
                        a.mode());
        LastError error = a == null || a.lastError() == null
                ? null
                : new LastError(
                        a.lastError(), a.lastErrorVersion(), a.lastErrorAt().toString());
        return new NodeJson(
                s.node(),
                s.state().name().toLowerCase(Locale.ROOT),
                s.inCluster(),
                s.running(),
                s.behindVersions(),
                s.lagSeconds(),
                ack,
                error);
    }
}
