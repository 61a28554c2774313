package io.rulesync.api.snapshot;

import io.rulesync.api.ProblemResponses;
import io.swagger.v3.oas.annotations.Operation;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** HTTP for {@link Snapshots}: the snapshot as JSON, or an RFC 9457 problem. */
@RestController
public class SnapshotController {
    private final Snapshots snapshots;

    public SnapshotController(Snapshots snapshots) {
        this.snapshots = snapshots;
    }

    @Operation(summary = "What a node agent loads: the node's rules at a version (or 'latest')")
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/snapshot")
    public ResponseEntity<?> snapshot(@PathVariable("cluster") String cluster, @PathVariable("version") String version,
            @RequestParam(name = "node", required = false) String node) {
        Snapshots.Outcome outcome = snapshots.snapshot(cluster, version, node);
        if (outcome instanceof Snapshots.Outcome.Found f) {
            return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(f.snapshot().toJson());
        }
        if (outcome instanceof Snapshots.Outcome.BadRequest b) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, b.parameter(), b.detail());
        }
        Snapshots.Outcome.NotFound n = (Snapshots.Outcome.NotFound) outcome;
        return ProblemResponses.about(HttpStatus.NOT_FOUND, n.parameter(), n.detail());
    }
}
