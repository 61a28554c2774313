package io.rulesync.api.deltas;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
import io.rulesync.model.rules.Lineage;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.constraints.Pattern;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;

/**
 * {@code GET /api/v1/clusters/{cluster}/deltas?after=V&node=N&wait=S}: what node agents read their cluster's versions
 * from, so that nodes need no Kafka credentials and read only the cluster their token is bound to; a long poll, or with
 * {@code watch=true} a stream (below).
 *
 * <p>The answer is {@code application/x-ndjson}: one delta per line (the compiler's delta format, the same as on the
 * deltas topic), in version order from {@code after + 1}, and the cluster's head in the {@value #HEAD} header. No lines:
 * nothing new within {@code wait} seconds (default 25), ask again. 410: the agent must load a snapshot (the next delta
 * was removed by retention, or it is too far behind).
 *
 * <p>With {@code watch=true} the answer is a stream, as a Kubernetes watch: each new version is written as a line when
 * it is stored, and the answer ends after {@code wait} seconds (then ask again after the last version read). Agents
 * watch: a version then costs each connected agent one write instead of a request. Errors are known before the stream
 * starts and answered as for a poll; a stream that cannot go on (retention, a stopping replica) just ends, and the next
 * request says why.
 *
 * <p>Under a staged rollout ({@code rollout} package) a node is served only the versions released to its wave, so
 * agents should name their {@code node}; a reader that does not is served what every wave has.
 */
@RestController
public class DeltasController {
    /** The response header with the cluster's newest version. */
    public static final String HEAD = "Rulesync-Head";

    public static final MediaType NDJSON = MediaType.parseMediaType("application/x-ndjson");
    static final int DEFAULT_WAIT_SECONDS = 25;
    private static final String WAIT = "[0-9]|[1-5][0-9]|60";
    private static final String WAIT_MESSAGE = "'%s' is not 0-60 (seconds)";

    private final DeltaWaits waits;

    public DeltasController(DeltaWaits waits) {
        this.waits = waits;
    }

    @Operation(
            summary = "What a node agent reads: its cluster's deltas after the version it runs, waiting for the next")
    @ApiResponse(
            responseCode = "200",
            description = "the deltas, one JSON object per line",
            content = @Content(mediaType = "application/x-ndjson", schema = @Schema(type = "string")))
    @Access({Role.AGENT, Role.VIEWER, Role.OPERATOR})
    @GetMapping(path = "/api/v1/clusters/{cluster}/deltas", params = "watch!=true")
    public DeferredResult<ResponseEntity<byte[]>> deltas(
            @PathVariable("cluster") String cluster,
            @RequestParam(name = "after") VersionRef after,
            @RequestParam(name = "node", required = false) DnsSubdomain node,
            @RequestParam(name = "lineage", required = false) String lineage,
            @RequestParam(name = "wait", required = false) @Pattern(regexp = WAIT, message = WAIT_MESSAGE) String wait,
            @RequestParam(name = "watch", required = false)
                    @Pattern(regexp = "true|false", message = "'%s' is not true or false")
                    String watch) {
        long seconds = wait == null ? DEFAULT_WAIT_SECONDS : Long.parseLong(wait);
        Long from = after.latest() ? null : after.number();
        // The timeout answer is "no news": the head cannot be named without a read, so the header is left out.
        DeferredResult<ResponseEntity<byte[]>> result = new DeferredResult<>(
                Math.max(1, seconds) * 1000,
                () -> ResponseEntity.ok().contentType(NDJSON).body(new byte[0]));
        Runnable forget = waits.request(
                cluster,
                node == null ? null : node.name(),
                from,
                lineage(lineage),
                a -> answer(result, cluster, a),
                result::setErrorResult);
        result.onCompletion(forget);
        result.onTimeout(forget);
        result.onError(e -> forget.run());
        if (seconds == 0 && !result.hasResult()) {
            forget.run();
            result.setResult(ResponseEntity.ok().contentType(NDJSON).body(new byte[0]));
        }
        return result;
    }

    @Operation(
            summary =
                    "What a node agent watches: its cluster's deltas after the version it runs, each new one as it is stored")
    @ApiResponse(
            responseCode = "200",
            description = "the deltas, one JSON object per line, each new one as it is stored",
            content = @Content(mediaType = "application/x-ndjson", schema = @Schema(type = "string")))
    @Access({Role.AGENT, Role.VIEWER, Role.OPERATOR})
    @GetMapping(path = "/api/v1/clusters/{cluster}/deltas", params = "watch=true")
    public ResponseEntity<ResponseBodyEmitter> watch(
            @PathVariable("cluster") String cluster,
            @RequestParam(name = "after") VersionRef after,
            @RequestParam(name = "node", required = false) DnsSubdomain node,
            @RequestParam(name = "lineage", required = false) String lineage,
            @RequestParam(name = "wait", required = false) @Pattern(regexp = WAIT, message = WAIT_MESSAGE) String wait,
            @RequestParam(name = "watch")
                    String watch) { // declared, as every parameter is, or it would be refused as unknown
        long seconds = wait == null ? DEFAULT_WAIT_SECONDS : Long.parseLong(wait);
        Long from = after.latest() ? null : after.number();
        String name = node == null ? null : node.name();
        DeltaWaits.Answer now = waits.now(cluster, name, from, lineage(lineage));
        if (now != null && !(now instanceof DeltaWaits.Answer.Deltas)) {
            throw problem(cluster, now); // known before anything is written: a status of its own
        }
        ResponseBodyEmitter emitter = new ResponseBodyEmitter(Math.max(1, seconds) * 1000);
        DeltaWaits.Answer.Deltas first = (DeltaWaits.Answer.Deltas) now;
        // The head as the stream starts; later ones are the versions of its lines.
        long head = first != null ? first.head() : waits.head(cluster);
        new DeltaStream(waits, cluster, name, emitter)
                .start(first, from != null ? from : waits.released(cluster, name));
        return ResponseEntity.ok()
                .contentType(NDJSON)
                .header(HEAD, Long.toString(head))
                .body(emitter);
    }

    /** The {@code lineage} parameter: the lineage of the version {@code after}, as the node holds it (absent: not known). */
    private static String lineage(String lineage) {
        try {
            return Lineage.check("lineage", lineage);
        } catch (IllegalArgumentException e) {
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "lineage", e.getMessage());
        }
    }

    private static void answer(DeferredResult<ResponseEntity<byte[]>> result, String cluster, DeltaWaits.Answer a) {
        if (a instanceof DeltaWaits.Answer.Deltas d) {
            result.setResult(ResponseEntity.ok()
                    .contentType(NDJSON)
                    .header(HEAD, Long.toString(d.head()))
                    .body(d.ndjson()));
        } else {
            result.setErrorResult(problem(cluster, a));
        }
    }

    /** What an answer without deltas says to the agent. */
    private static ParameterProblem problem(String cluster, DeltaWaits.Answer a) {
        if (a instanceof DeltaWaits.Answer.Snapshot s) {
            return new ParameterProblem(HttpStatus.GONE, "after", "after: " + s.why()).with("latest", s.head());
        } else if (a instanceof DeltaWaits.Answer.Stopping) {
            return new ParameterProblem(
                    HttpStatus.SERVICE_UNAVAILABLE, null, "this api replica is stopping; ask again");
        }
        return ProblemResponses.unknownCluster(cluster);
    }
}
