package io.rulesync.api.snapshot;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
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

    /** The snapshot's JSON is written by the model ({@code RulesSnapshot.toJson}), the format agents read; sent as it is. */
    @Operation(summary = "What a node agent loads: the node's rules at a version (or 'latest')")
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/snapshot")
    public ResponseEntity<String> snapshot(@PathVariable("cluster") String cluster, @PathVariable("version") VersionRef version,
            @RequestParam(name = "node") DnsSubdomain node) {
        Snapshots.Outcome outcome = snapshots.snapshot(cluster, version, node);
        if (outcome instanceof Snapshots.Outcome.NotFound n) {
            throw new ParameterProblem(HttpStatus.NOT_FOUND, n.parameter(), n.detail());
        }
        if (outcome instanceof Snapshots.Outcome.NoVersion n) {
            throw ProblemResponses.noSuchVersion(cluster, n.seq(), n.oldest(), n.head(), "version");
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(((Snapshots.Outcome.Found) outcome).snapshot().toJson());
    }
}
