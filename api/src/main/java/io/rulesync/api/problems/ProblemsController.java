package io.rulesync.api.problems;

import io.rulesync.api.ProblemResponses;
import io.rulesync.store.ProblemStore;
import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.Operation;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/clusters/{cluster}/problems}: what of a cluster was refused, where operators look.
 * The objects its watcher refuses now (per source: a manifest file, or an object an informer saw),
 * each with the object, the field and the reason, and when it was reported; and the newest records of
 * its events the compiler could not use (dead letters), with the reason. A cluster whose every object
 * is refused has no version, and is still known here.
 */
@RestController
public class ProblemsController {
    /** Dead letters are history: the newest are shown, with the total. */
    static final int DEAD_LETTERS = 20;
    /** Characters of a dead letter's record shown: enough to recognise it, never a 4 MB payload. */
    static final int PAYLOAD_CHARS = 200;

    private final ProblemStore store;

    public ProblemsController(ProblemStore store) {
        this.store = store;
    }

    @Operation(summary = "The objects the cluster's watcher refuses now, with the field and reason, and the newest dead letters")
    @GetMapping("/api/v1/clusters/{cluster}/problems")
    public ResponseEntity<?> problems(@PathVariable("cluster") String cluster) {
        if (!store.known(cluster)) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, "cluster", "cluster: '" + KubernetesNames.printable(cluster)
                    + "' is not known (nothing of it was received)");
        }
        List<ProblemStore.StoredProblem> problems = store.problems(cluster);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", cluster);
        body.put("refusedObjects", problems.stream().map(p -> List.of(p.source(), p.object())).distinct().count());
        body.put("problems", problems.stream().map(ProblemsController::json).toList());
        body.put("deadLetterCount", store.deadLetterCount(cluster));
        body.put("deadLetters", store.deadLetters(cluster, DEAD_LETTERS, PAYLOAD_CHARS).stream().map(ProblemsController::json).toList());
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    private static Map<String, Object> json(ProblemStore.StoredProblem p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("source", p.source());
        m.put("location", p.location());
        m.put("object", p.object());
        m.put("field", p.field());
        m.put("reason", p.message());
        m.put("reportedAt", p.reportedAt().toString());
        return m;
    }

    private static Map<String, Object> json(ProblemStore.DeadLetter d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", d.topic());
        m.put("partition", d.partition());
        m.put("offset", d.offset());
        m.put("epoch", d.epoch());
        m.put("reason", d.reason());
        m.put("receivedAt", d.receivedAt().toString());
        m.put("recordStart", d.payloadStart());
        return m;
    }
}
