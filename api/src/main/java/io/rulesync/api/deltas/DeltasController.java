package io.rulesync.api.deltas;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
import io.swagger.v3.oas.annotations.Operation;
import jakarta.validation.constraints.Pattern;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

/**
 * {@code GET /api/v1/clusters/{cluster}/deltas?after=V&node=N&wait=S}: the long poll a node agent reads its cluster's
 * versions with, so that nodes need no Kafka credentials and read only the cluster their token is bound to.
 *
 * <p>The answer is {@code application/x-ndjson}: one delta per line (the compiler's delta format, the same as on the
 * deltas topic), in version order from {@code after + 1}, and the cluster's head in the {@value #HEAD} header. No lines:
 * nothing new within {@code wait} seconds (default 25), ask again. 410: the agent must load a snapshot (the next delta
 * was removed by retention, or it is too far behind).
 */
@RestController
public class DeltasController {
    /** The response header with the cluster's newest version. */
    public static final String HEAD = "Rulesync-Head";
    public static final MediaType NDJSON = MediaType.parseMediaType("application/x-ndjson");
    static final int DEFAULT_WAIT_SECONDS = 25;

    private final DeltaWaits waits;

    public DeltasController(DeltaWaits waits) {
        this.waits = waits;
    }

    @Operation(summary = "What a node agent reads: its cluster's deltas after the version it runs, waiting for the next")
    @GetMapping("/api/v1/clusters/{cluster}/deltas")
    public DeferredResult<ResponseEntity<byte[]>> deltas(@PathVariable("cluster") String cluster,
            @RequestParam(name = "after") VersionRef after,
            @RequestParam(name = "node", required = false) DnsSubdomain node,
            @RequestParam(name = "wait", required = false) @Pattern(regexp = "[0-9]|[1-5][0-9]|60",
                    message = "'%s' is not 0-60 (seconds)") String wait) {
        long seconds = wait == null ? DEFAULT_WAIT_SECONDS : Long.parseLong(wait);
        Long from = after.latest() ? null : after.number();
        // The timeout answer is "no news": the head cannot be named without a read, so the header is left out.
        DeferredResult<ResponseEntity<byte[]>> result = new DeferredResult<>(Math.max(1, seconds) * 1000,
                () -> ResponseEntity.ok().contentType(NDJSON).body(new byte[0]));
        Runnable forget = waits.request(cluster, from, a -> answer(result, cluster, a), result::setErrorResult);
        result.onCompletion(forget);
        result.onTimeout(forget);
        result.onError(e -> forget.run());
        if (seconds == 0 && !result.hasResult()) {
            forget.run();
            result.setResult(ResponseEntity.ok().contentType(NDJSON).body(new byte[0]));
        }
        return result;
    }

    private static void answer(DeferredResult<ResponseEntity<byte[]>> result, String cluster, DeltaWaits.Answer a) {
        if (a instanceof DeltaWaits.Answer.Deltas d) {
            result.setResult(ResponseEntity.ok().contentType(NDJSON).header(HEAD, Long.toString(d.head())).body(d.ndjson()));
        } else if (a instanceof DeltaWaits.Answer.Snapshot s) {
            result.setErrorResult(new ParameterProblem(HttpStatus.GONE, "after", "after: " + s.why()).with("latest", s.head()));
        } else if (a instanceof DeltaWaits.Answer.Stopping) {
            result.setErrorResult(new ParameterProblem(HttpStatus.SERVICE_UNAVAILABLE, null, "this api replica is stopping; ask again"));
        } else {
            result.setErrorResult(ProblemResponses.unknownCluster(cluster));
        }
    }
}
