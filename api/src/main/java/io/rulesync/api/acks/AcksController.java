package io.rulesync.api.acks;

import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import io.rulesync.store.StoreException;
import io.swagger.v3.oas.annotations.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * {@code POST /api/v1/clusters/{cluster}/nodes/{node}/acks}: a node agent reports the versions it applied or refused
 * (on every transport but the stream, which carries its acks itself). Only agent tokens may, and a token bound to a node only for
 * that node (see {@code AccessRules}). The body is a JSON list of acks in their wire format ({@link NodeAck#toJson}),
 * oldest first: an agent sends what piled up while its previous request was out. 204 once stored.
 */
@RestController
public class AcksController {
    /** An agent's queue keeps 100; a request never needs more. */
    static final int MAX_ACKS = 1_000;

    private final AckWriter writer;
    private final AckVersions versions;
    private final Executor answers;

    /** @param answers where a stored batch's requests are answered: off the writer's one thread, which only writes */
    public AcksController(AckWriter writer, AckVersions versions, Executor answers) {
        this.writer = writer;
        this.versions = versions;
        this.answers = answers;
    }

    @Operation(summary = "What a node agent sends after applies: the versions it runs, or why they failed")
    @Access(value = Role.AGENT, speaksForNode = true)
    @PostMapping(path = "/api/v1/clusters/{cluster}/nodes/{node}/acks", consumes = "application/json")
    public CompletableFuture<ResponseEntity<Void>> ack(
            @PathVariable("cluster") String cluster,
            @PathVariable("node") DnsSubdomain node,
            @RequestBody String body) {
        List<NodeAck> acks = read(body);
        for (int i = 0; i < acks.size(); i++) {
            NodeAck ack = acks.get(i);
            if (!ack.cluster().equals(cluster) || !ack.node().equals(node.name())) {
                throw new ParameterProblem(
                        HttpStatus.BAD_REQUEST,
                        "body",
                        "body[" + i + "]: the ack is for node '"
                                + KubernetesNames.printable(ack.node()) + "' of cluster '"
                                + KubernetesNames.printable(ack.cluster())
                                + "', not the node and cluster of the path");
            }
        }
        String beyond = versions.refused("body", acks);
        if (beyond != null) {
            throw new ParameterProblem(HttpStatus.UNPROCESSABLE_CONTENT, "body", beyond);
        }
        // Answered asynchronously once the batch is committed: a request thread waiting for the commit instead held one
        // of
        // Tomcat's 200 while acks streamed in (500 a second took them all, and GET /nodes queued behind: p99 473 ms).
        return writer.write(acks)
                .orTimeout(30, TimeUnit.SECONDS)
                .handleAsync(
                        (stored, failure) -> {
                            if (failure == null) {
                                return ResponseEntity.noContent().<Void>build();
                            }
                            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                                    ? failure.getCause()
                                    : failure;
                            throw cause instanceof StoreException s
                                    ? s
                                    : cause instanceof TimeoutException
                                            ? new StoreException("storing acks took more than 30 s", cause)
                                            : new StoreException("storing acks", cause);
                        },
                        answers);
    }

    /** A JSON list of acks in their wire format, at least one and at most {@value #MAX_ACKS}; a problem names the one at fault. */
    private static List<NodeAck> read(String body) {
        JsonNode list;
        try {
            list = Json.MAPPER.readTree(body);
        } catch (JacksonException e) {
            throw new ParameterProblem(
                    HttpStatus.BAD_REQUEST,
                    "body",
                    "body: is not JSON (" + KubernetesNames.printable(e.getOriginalMessage()) + ")");
        }
        if (list == null || !list.isArray() || list.isEmpty() || list.size() > MAX_ACKS) {
            throw new ParameterProblem(
                    HttpStatus.BAD_REQUEST, "body", "body: expected a list of 1-" + MAX_ACKS + " acks");
        }
        List<NodeAck> acks = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            try {
                acks.add(NodeAck.fromJson(list.get(i).toString()));
            } catch (IllegalArgumentException e) {
                throw new ParameterProblem(
                        HttpStatus.BAD_REQUEST,
                        "body",
                        "body[" + i + "]: " + KubernetesNames.printable(e.getMessage()));
            }
        }
        return acks;
    }
}
