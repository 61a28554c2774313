package io.rulesync.api.nodes;

import io.rulesync.api.ProblemResponses;
import io.rulesync.compiler.store.NodeStatus;
import io.rulesync.compiler.store.NodeStatusStore;
import io.rulesync.compiler.store.VersionStore;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /api/v1/clusters/{cluster}/nodes}: per node, the version it runs, its state, lag and last error. */
@RestController
public class NodesController {
    private final VersionStore versions;
    private final NodeStatusStore acks;
    private final Clock clock;

    public NodesController(VersionStore versions, NodeStatusStore acks, Clock clock) {
        this.versions = versions;
        this.acks = acks;
        this.clock = clock;
    }

    @GetMapping("/api/v1/clusters/{cluster}/nodes")
    public ResponseEntity<?> nodes(@PathVariable("cluster") String cluster) {
        long head = versions.head(cluster);
        if (head == 0) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, "cluster",
                    "cluster: '" + io.rulesync.model.cluster.KubernetesNames.printable(cluster) + "' is not known (it has no versions)");
        }
        Set<String> headNodes = versions.nodes(cluster, head).keySet();
        List<Convergence.NodeState> states = Convergence.of(head, headNodes, acks.nodeStatus(cluster),
                v -> versions.version(cluster, v).map(VersionStore.VersionInfo::createdAt).orElse(Instant.EPOCH), clock.instant());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", cluster);
        body.put("version", head);
        body.put("nodes", states.stream().map(NodesController::json).toList());
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    private static Map<String, Object> json(Convergence.NodeState s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("node", s.node());
        m.put("state", s.state().name().toLowerCase(java.util.Locale.ROOT));
        m.put("inCluster", s.inCluster());
        m.put("running", s.running());
        m.put("behindVersions", s.behindVersions());
        m.put("lagSeconds", s.lagSeconds());
        NodeStatus a = s.lastAck();
        if (a != null) {
            m.put("lastAck", Map.of("version", a.lastVersion(), "status", a.lastStatus().name(), "at", a.ackedAt().toString(),
                    "durationMs", a.durationMs(), "ruleCount", a.ruleCount(), "mode", a.mode()));
            if (a.lastError() != null) {
                m.put("lastError", Map.of("message", a.lastError(), "version", a.lastErrorVersion(), "at", a.lastErrorAt().toString()));
            }
        }
        return m;
    }
}
