package io.rulesync.api.problems;

import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.store.ProblemStore;
import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.Operation;
import java.util.List;
import org.springframework.http.HttpStatus;
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

    /** The answer: what is refused now, and the newest dead letters with their total. */
    public record ClusterProblems(String cluster, long refusedObjects, List<ProblemJson> problems, long deadLetterCount,
            List<DeadLetterJson> deadLetters) {
    }

    public record ProblemJson(String source, String location, String object, String field, String reason, String reportedAt) {
    }

    public record DeadLetterJson(String topic, int partition, long offset, int epoch, String reason, String receivedAt, String recordStart) {
    }

    @Operation(summary = "The objects the cluster's watcher refuses now, with the field and reason, and the newest dead letters")
    @GetMapping("/api/v1/clusters/{cluster}/problems")
    public ClusterProblems problems(@PathVariable("cluster") String cluster) {
        if (!store.known(cluster)) {
            throw new ParameterProblem(HttpStatus.NOT_FOUND, "cluster", "cluster: '" + KubernetesNames.printable(cluster)
                    + "' is not known (nothing of it was received)");
        }
        List<ProblemStore.StoredProblem> problems = store.problems(cluster);
        return new ClusterProblems(cluster, problems.stream().map(p -> List.of(p.source(), p.object())).distinct().count(),
                problems.stream().map(ProblemsController::json).toList(), store.deadLetterCount(cluster),
                store.deadLetters(cluster, DEAD_LETTERS, PAYLOAD_CHARS).stream().map(ProblemsController::json).toList());
    }

    private static ProblemJson json(ProblemStore.StoredProblem p) {
        return new ProblemJson(p.source(), p.location(), p.object(), p.field(), p.message(), p.reportedAt().toString());
    }

    private static DeadLetterJson json(ProblemStore.DeadLetter d) {
        return new DeadLetterJson(d.topic(), d.partition(), d.offset(), d.epoch(), d.reason(), d.receivedAt().toString(), d.payloadStart());
    }
}
