package io.rulesync.api.snapshot;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** HTTP for {@link Snapshots}: the snapshot as (gzip-compressed) JSON, 304 for the version the caller runs, or an RFC 9457 problem. */
@RestController
public class SnapshotController {
    private final Snapshots snapshots;
    /** Bytes of snapshot bodies sent, by encoding (a 304 counts as a body of none): what a start-up storm costs the network. */
    private final DistributionSummary gzipBytes;

    private final DistributionSummary plainBytes;
    private final DistributionSummary notModified;

    public SnapshotController(Snapshots snapshots, MeterRegistry meters) {
        this.snapshots = snapshots;
        this.gzipBytes = sent(meters, "gzip");
        this.plainBytes = sent(meters, "identity");
        this.notModified = sent(meters, "none");
    }

    private static DistributionSummary sent(MeterRegistry meters, String encoding) {
        return DistributionSummary.builder("rulesync.snapshot.bytes")
                .baseUnit("bytes")
                .tag("encoding", encoding)
                .description("snapshot bodies sent to agents (encoding none: 304, the agent runs the version)")
                .register(meters);
    }

    /**
     * The snapshot's JSON as the model writes it ({@code RulesSnapshot}), the format agents read, sent gzip-compressed to
     * clients that accept it (agents do) and inflated here for those that do not. {@code ETag} is the version; an agent
     * that already runs it gets 304.
     */
    @Operation(summary = "What a node agent loads: the node's rules at a version (or 'latest')")
    @ApiResponse(
            responseCode = "200",
            description = "the node's rules (gzip-encoded when asked for)",
            content = @Content(mediaType = "application/json", schema = @Schema(type = "object")))
    @Access({Role.AGENT, Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/snapshot")
    public ResponseEntity<byte[]> snapshot(
            @PathVariable("cluster") String cluster,
            @PathVariable("version") VersionRef version,
            @RequestParam(name = "node") DnsSubdomain node,
            @RequestHeader(name = HttpHeaders.IF_NONE_MATCH, required = false) String ifNoneMatch,
            @RequestHeader(name = HttpHeaders.ACCEPT_ENCODING, required = false) String acceptEncoding) {
        Snapshots.Outcome outcome = snapshots.snapshot(cluster, version, node, ifNoneMatch);
        if (outcome instanceof Snapshots.Outcome.NotFound n) {
            throw new ParameterProblem(HttpStatus.NOT_FOUND, n.parameter(), n.detail());
        }
        if (outcome instanceof Snapshots.Outcome.NoVersion n) {
            throw ProblemResponses.noSuchVersion(cluster, n.seq(), n.oldest(), n.head(), "version");
        }
        if (outcome instanceof Snapshots.Outcome.NotModified m) {
            notModified.record(0);
            return ResponseEntity.status(HttpStatus.NOT_MODIFIED)
                    .eTag(Snapshots.etag(m.seq(), m.lineage()))
                    .build();
        }
        Snapshots.Outcome.Found found = (Snapshots.Outcome.Found) outcome;
        ResponseEntity.BodyBuilder ok = ResponseEntity.ok()
                .contentType(MediaType.APPLICATION_JSON)
                .eTag(Snapshots.etag(found.seq(), found.lineage()))
                .varyBy(HttpHeaders.ACCEPT_ENCODING);
        if (acceptsGzip(acceptEncoding)) {
            gzipBytes.record(found.gzip().length);
            return ok.header(HttpHeaders.CONTENT_ENCODING, "gzip").body(found.gzip());
        }
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(found.gzip()))) {
            byte[] plain = in.readAllBytes();
            plainBytes.record(plain.length);
            return ok.body(plain);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // our own bytes, in memory
        }
    }

    /** Whether {@code Accept-Encoding} takes gzip (and does not refuse it with {@code q=0}). */
    static boolean acceptsGzip(String acceptEncoding) {
        if (acceptEncoding == null) {
            return false;
        }
        for (String part : acceptEncoding.split(",")) {
            String[] p = part.strip().split(";");
            if (p[0].strip().equalsIgnoreCase("gzip")) {
                return p.length < 2 || !p[1].replace(" ", "").matches("q=0(\\.0*)?");
            }
        }
        return false;
    }
}
