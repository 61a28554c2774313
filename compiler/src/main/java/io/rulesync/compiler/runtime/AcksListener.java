package io.rulesync.compiler.runtime;

import io.rulesync.store.NodeStatusStore;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.text.Printable;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.listener.BatchMessageListener;

/**
 * Records the node agents' acks in PostgreSQL. A bad ack is logged with the reason and skipped:
 * one broken agent must not stop the fleet's status from being recorded. A failure to store (the
 * database is down) fails the batch, which the container retries.
 */
public final class AcksListener implements BatchMessageListener<String, String> {
    private static final Logger log = LoggerFactory.getLogger(AcksListener.class);

    private final NodeStatusStore store;
    private final CompilerMetrics metrics;

    public AcksListener(NodeStatusStore store, CompilerMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    /** A record read as an ack, or why it is not one. */
    public sealed interface Decoded {
        record Valid(NodeAck ack) implements Decoded {
        }

        record Invalid(String reason) implements Decoded {
        }
    }

    @Override
    public void onMessage(List<ConsumerRecord<String, String>> records) {
        List<NodeAck> acks = new ArrayList<>(records.size());
        for (ConsumerRecord<String, String> r : records) {
            Decoded d = decode(r.key(), r.value());
            if (d instanceof Decoded.Valid v) {
                acks.add(v.ack());
            } else if (d instanceof Decoded.Invalid i) {
                log.warn("ack skipped, {}-{} offset {} (key {}): {}", r.topic(), r.partition(), r.offset(),
                        r.key() == null ? "none" : Printable.escape(r.key()), Printable.escape(i.reason()));
            }
        }
        store.recordAcks(acks);
        metrics.acked(acks);
        for (NodeAck a : acks) {
            if (a.status() == NodeAck.Status.FAILED) {
                log.atWarn().addKeyValue("cluster", a.cluster()).addKeyValue("node", a.node()).addKeyValue("version", a.version())
                        .addKeyValue("running", a.running()).log("node did not apply the version: " + Printable.escape(a.error()));
            }
        }
    }

    /** Reads one record of the acks topic; it must be keyed by its cluster, like every topic here. */
    public static Decoded decode(String key, String value) {
        if (value == null) {
            return new Decoded.Invalid("the record has no value");
        }
        NodeAck ack;
        try {
            ack = NodeAck.fromJson(value);
        } catch (RuntimeException e) {
            return new Decoded.Invalid(e.getMessage());
        }
        // NodeAck's constructor computes this check but does not act on it; a name goes into the database.
        String nodeProblem = KubernetesNames.checkSubdomain(ack.node());
        if (nodeProblem != null) {
            return new Decoded.Invalid("node: " + nodeProblem);
        }
        if (!ack.cluster().equals(key)) {
            return new Decoded.Invalid("key: '" + key + "' is not the ack's cluster '" + ack.cluster() + "'");
        }
        return new Decoded.Valid(ack);
    }
}
