package io.rulesync.api.acks;

import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.store.StoreException;
import io.swagger.v3.oas.annotations.Operation;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /api/v1/clusters/{cluster}/nodes/{node}/acks}: a node agent reports the version it runs (the ack it
 * would otherwise send on the acks topic). Only agent tokens may, and a token bound to a node only for that node
 * (see {@code AccessRules}). 204 once stored; the body is the ack's wire format ({@link NodeAck#toJson}).
 */
@RestController
public class AcksController {
    private final AckWriter writer;

    public AcksController(AckWriter writer) {
        this.writer = writer;
    }

    @Operation(summary = "What a node agent sends after every apply: the version it runs, or why it failed")
    @PostMapping(path = "/api/v1/clusters/{cluster}/nodes/{node}/acks", consumes = "application/json")
    public CompletableFuture<ResponseEntity<Void>> ack(@PathVariable("cluster") String cluster, @PathVariable("node") DnsSubdomain node,
            @RequestBody String body) {
        NodeAck ack;
        try {
            ack = NodeAck.fromJson(body);
        } catch (IllegalArgumentException e) {
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "body", "body: " + KubernetesNames.printable(e.getMessage()));
        }
        if (!ack.cluster().equals(cluster) || !ack.node().equals(node.name())) {
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "body", "body: the ack is for node '" + KubernetesNames.printable(ack.node())
                    + "' of cluster '" + KubernetesNames.printable(ack.cluster()) + "', not the node and cluster of the path");
        }
        return writer.write(ack).handle((ok, failure) -> {
            if (failure == null) {
                return ResponseEntity.noContent().build();
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            throw cause instanceof StoreException s ? s : new StoreException("storing an ack", cause);
        });
    }
}
