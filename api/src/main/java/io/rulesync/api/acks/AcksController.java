package io.rulesync.api.acks;

import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import io.rulesync.store.StoreException;
import io.swagger.v3.oas.annotations.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
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
 * (the acks it would otherwise send on the acks topic). Only agent tokens may, and a token bound to a node only for
 * that node (see {@code AccessRules}). The body is a JSON list of acks in their wire format ({@link NodeAck#toJson}),
 * oldest first: an agent sends what piled up while its previous request was out. 204 once stored.
 */
@RestController
public class AcksController {
    /** An agent's queue keeps 100; a request never needs more. */
    static final int MAX_ACKS = 1_000;
    private final AckWriter writer;

    public AcksController(AckWriter writer) {
        this.writer = writer;
    }

    @Operation(summary = "What a node agent sends after applies: the versions it runs, or why they failed")
    @PostMapping(path = "/api/v1/clusters/{cluster}/nodes/{node}/acks", consumes = "application/json")
    public ResponseEntity<Void> ack(@PathVariable("cluster") String cluster, @PathVariable("node") DnsSubdomain node,
            @RequestBody String body) {
        List<NodeAck> acks = read(body);
        for (int i = 0; i < acks.size(); i++) {
            NodeAck ack = acks.get(i);
            if (!ack.cluster().equals(cluster) || !ack.node().equals(node.name())) {
                throw new ParameterProblem(HttpStatus.BAD_REQUEST, "body", "body[" + i + "]: the ack is for node '"
                        + KubernetesNames.printable(ack.node()) + "' of cluster '" + KubernetesNames.printable(ack.cluster())
                        + "', not the node and cluster of the path");
            }
        }
        // Waited for here, on the request's thread (a few ms, the batch's commit): completing thousands of asynchronous
        // requests from the writer's one thread made it the bottleneck of a fleet's acks.
        try {
            writer.write(acks).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof StoreException s ? s : new StoreException("storing acks", e.getCause());
        } catch (TimeoutException e) {
            throw new StoreException("storing acks took more than 30 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while storing acks", e);
        }
        return ResponseEntity.noContent().build();
    }

    /** A JSON list of acks in their wire format, at least one and at most {@value #MAX_ACKS}; a problem names the one at fault. */
    private static List<NodeAck> read(String body) {
        JsonNode list;
        try {
            list = Json.MAPPER.readTree(body);
        } catch (JacksonException e) {
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "body", "body: is not JSON (" + KubernetesNames.printable(
                    e.getOriginalMessage()) + ")");
        }
        if (list == null || !list.isArray() || list.isEmpty() || list.size() > MAX_ACKS) {
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "body", "body: expected a list of 1-" + MAX_ACKS + " acks");
        }
        List<NodeAck> acks = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            try {
                acks.add(NodeAck.fromJson(list.get(i).toString()));
            } catch (IllegalArgumentException e) {
                throw new ParameterProblem(HttpStatus.BAD_REQUEST, "body", "body[" + i + "]: " + KubernetesNames.printable(e.getMessage()));
            }
        }
        return acks;
    }
}
