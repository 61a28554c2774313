package io.rulesync.api.problems;

import io.rulesync.api.access.Access;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.BearerTokenFilter;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.store.ProblemStore;
import io.swagger.v3.oas.annotations.Operation;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/clusters/{cluster}/problems}: what of a cluster was refused, where operators look.
 * The objects its watcher refuses now (per source: a manifest file, or an object an informer saw),
 * each with the object, the field and the reason, and when it was reported; and the newest records of
 * its events the compiler could not use (dead letters), with the reason. A cluster whose every object
 * is refused has no version, and is still known here. {@code POST .../dead-letters/{id}/replay} (operators) reads one
 * again.
 */
@RestController
public class ProblemsController {
    /** Dead letters are history: the newest are shown, with the total. */
    static final int DEAD_LETTERS = 20;
    /** Characters of a dead letter's record shown: enough to recognise it, never a 4 MB payload. */
    static final int PAYLOAD_CHARS = 200;

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ProblemsController.class);

    private final ProblemStore store;
    private final Clock clock;

    public ProblemsController(ProblemStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    /** The answer: what is refused now, and the newest dead letters with their total. */
    public record ClusterProblems(
            String cluster,
            long refusedObjects,
            List<ProblemJson> problems,
            long deadLetterCount,
            List<DeadLetterJson> deadLetters) {}

    public record ProblemJson(
            String source, String location, String object, String field, String reason, String reportedAt) {}

    public record DeadLetterJson(
            long id,
            String topic,
            int partition,
            long offset,
            int epoch,
            String reason,
            String receivedAt,
            String recordStart) {}

    /** A replay queued: the record goes to {@code topic} again. */
    public record ReplayJson(String cluster, long deadLetter, String topic, String replayedBy, String queuedAt) {}

    @Operation(
            summary =
                    "The objects the cluster's watcher refuses now, with the field and reason, and the newest dead letters")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/problems")
    public ClusterProblems problems(@PathVariable("cluster") String cluster) {
        if (!store.known(cluster)) {
            throw new ParameterProblem(
                    HttpStatus.NOT_FOUND,
                    "cluster",
                    "cluster: '" + KubernetesNames.printable(cluster) + "' is not known (nothing of it was received)");
        }
        List<ProblemStore.StoredProblem> problems = store.problems(cluster);
        return new ClusterProblems(
                cluster,
                problems.stream()
                        .map(p -> List.of(p.source(), p.object()))
                        .distinct()
                        .count(),
                problems.stream().map(ProblemsController::json).toList(),
                store.deadLetterCount(cluster),
                store.deadLetters(cluster, DEAD_LETTERS, PAYLOAD_CHARS).stream()
                        .map(ProblemsController::json)
                        .toList());
    }

    @Operation(
            summary =
                    "Reads a dead letter again: its record is published to the events topic once more, for the compiler to "
                            + "fold as any other (after the fault that made it a dead letter was fixed); answers 202 when queued")
    @Access(Role.OPERATOR)
    @PostMapping("/api/v1/clusters/{cluster}/dead-letters/{id}/replay")
    public ResponseEntity<ReplayJson> replay(
            @PathVariable("cluster") String cluster,
            @PathVariable("id") long id,
            @RequestAttribute(BearerTokenFilter.CALLER) ApiTokens.Caller caller) {
        Instant now = clock.instant();
        String topic = store.replay(cluster, id, now)
                .orElseThrow(() -> new ParameterProblem(
                        HttpStatus.NOT_FOUND,
                        "id",
                        "id: cluster '" + KubernetesNames.printable(cluster) + "' has no dead letter " + id));
        log.info("dead letter {} of cluster {} queued for {} again by {}", id, cluster, topic, caller.name());
        return ResponseEntity.accepted().body(new ReplayJson(cluster, id, topic, caller.name(), now.toString()));
    }

    private static ProblemJson json(ProblemStore.StoredProblem p) {
        return new ProblemJson(
                p.source(),
                p.location(),
                p.object(),
                p.field(),
                p.message(),
                p.reportedAt().toString());
    }

    private static DeadLetterJson json(ProblemStore.DeadLetter d) {
        return new DeadLetterJson(
                d.id(),
                d.topic(),
                d.partition(),
                d.offset(),
                d.epoch(),
                d.reason(),
                d.receivedAt().toString(),
                d.payloadStart());
    }
}
