package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.runtime.BatchRows.Decoded;
import io.rulesync.compiler.runtime.PartitionProcessor.Record;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.Json;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import io.rulesync.testsupport.cluster.Fixtures;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The rows a batch writes, shaped without Kafka or a database. */
class BatchRowsTest {
    private static final Topics TOPICS = new Topics("events", "deltas", "events.dlt");
    private final BatchRows rows = new BatchRows(TOPICS, 3);

    private static Decoded at(long offset, ClusterEvent e) {
        return new Decoded(new Record(offset, e.cluster(), "{}"), e);
    }

    private static JsonNode json(String s) throws Exception {
        return Json.MAPPER.readTree(s);
    }

    @Test
    void aCauseNamesTheActionsTheOffsetsAndAtMostTwentyObjects() throws Exception {
        List<Decoded> events = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            events.add(at(100 + i, Fixtures.upsert("shop", Fixtures.service("s" + (char) ('a' + i), "10.96.0." + i))));
        }
        RollbackRequested rollback = new RollbackRequested("shop", 7, 2, "ana", "bad deploy", Fixtures.T);
        events.add(at(125, rollback));

        JsonNode c = json(rows.cause(events, List.of(new ClusterHead.ActionOutcome(rollback, null))));

        assertThat(c.get("operatorActions").get(0).get("action").asString()).isEqualTo("rollback");
        assertThat(c.get("operatorActions").get(0).get("toVersion").asLong()).isEqualTo(2);
        assertThat(c.get("operatorActions").get(0).get("actor").asString()).isEqualTo("ana");
        assertThat(c.get("events").asInt()).isEqualTo(26);
        assertThat(c.get("topic").asString()).isEqualTo("events");
        assertThat(c.get("partition").asInt()).isEqualTo(3);
        assertThat(c.get("firstOffset").asLong()).isEqualTo(100);
        assertThat(c.get("lastOffset").asLong()).isEqualTo(125);
        assertThat(c.get("objects")).hasSize(BatchRows.CAUSE_OBJECTS);
        assertThat(c.get("objects").get(0).asString()).isEqualTo("Service shop/sa");
        assertThat(c.get("moreObjects").asInt()).isEqualTo(5);
    }

    @Test
    void aRefusedActionIsNotInTheCause() throws Exception {
        RollbackRequested rollback = new RollbackRequested("shop", 7, 2, "ana", "bad deploy", Fixtures.T);
        Decoded upsert = at(5, Fixtures.upsert("shop", Fixtures.service("web", "10.96.0.10")));
        JsonNode c = json(rows.cause(
                List.of(upsert, at(6, rollback)),
                List.of(new ClusterHead.ActionOutcome(rollback, "already carried out"))));
        assertThat(c.has("operatorActions")).isFalse();
        assertThat(c.get("objects").get(0).asString()).isEqualTo("Service shop/web");
    }

    @Test
    void aDeadLetterIsKeptAndPublishedWithWhereItCameFrom() throws Exception {
        List<Batch.DeadLetterRow> dead = new ArrayList<>();
        List<Batch.OutboxRow> outbox = new ArrayList<>();
        rows.deadLetter(new Record(42, null, "not json"), "is not JSON", dead, outbox);

        assertThat(dead).containsExactly(new Batch.DeadLetterRow(42, null, "not json", "is not JSON"));
        assertThat(outbox).hasSize(1);
        assertThat(outbox.get(0).topic()).isEqualTo("events.dlt");
        assertThat(outbox.get(0).key()).as("a record without a key").isEmpty();
        JsonNode m = json(outbox.get(0).payload());
        assertThat(m.get("reason").asString()).isEqualTo("is not JSON");
        assertThat(m.get("topic").asString()).isEqualTo("events");
        assertThat(m.get("partition").asInt()).isEqualTo(3);
        assertThat(m.get("offset").asLong()).isEqualTo(42);
        assertThat(m.get("value").asString()).isEqualTo("not json");
    }

    @Test
    void anEventIsStoredUnderItsWireNameWithTheObjectItNames() {
        ClusterEvent e = Fixtures.upsert("shop", Fixtures.service("web", "10.96.0.10"));
        Batch.EventRow row = rows.event(at(9, e), 4L);
        assertThat(row.cluster()).isEqualTo("shop");
        assertThat(row.offset()).isEqualTo(9);
        assertThat(row.type()).isEqualTo(e.type().wireName());
        assertThat(row.kind()).isEqualTo("Service");
        assertThat(row.key()).isEqualTo("shop/web");
        assertThat(row.versionSeq()).isEqualTo(4L);
    }

    @Test
    void aResyncRequestGoesToTheResyncTopicUnderItsCluster() {
        Batch.OutboxRow r = rows.resync("shop", "digest disagrees", Fixtures.T);
        assertThat(r.topic()).isEqualTo("events.resync");
        assertThat(r.key()).isEqualTo("shop");
        assertThat(r.payload()).contains("digest disagrees");
    }
}
