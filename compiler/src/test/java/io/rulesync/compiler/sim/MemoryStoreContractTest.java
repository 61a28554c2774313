package io.rulesync.compiler.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.Outbox;
import io.rulesync.store.VersionHistory;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The simulation's store is only as good as its likeness to PostgreSQL's: the same records, in the same batches, with
 * operator actions, an action delivered twice and a writer that fell behind, go to a processor on each, and everything
 * either stored must be the same: versions with their causes and rules, the deltas published byte for byte, events and
 * dead letters, action outcomes, the pin, and what a rebuild reads back.
 */
@RequiresPostgres
class MemoryStoreContractTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-04T12:00:00Z"), ZoneOffset.UTC);

    private static PartitionProcessor processor(io.rulesync.store.PartitionStore store) {
        return new PartitionProcessor(
                store,
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                PartitionProcessor.Observer.NONE,
                java.time.Duration.ofMinutes(1),
                7,
                Runnable::run);
    }

    @Test
    void theMemoryStoreStoresWhatPostgresStores() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores pg = CompilerStores.on(db.dataSource());
            OperatorActionStore pgActions = new OperatorActionStore(db.dataSource());
            MemoryPartitionStore mem = new MemoryPartitionStore();
            io.rulesync.store.PartitionStore memStore = mem.as(0, mem.claim(0));
            PartitionProcessor onPg = processor(pg.partition());
            PartitionProcessor onMem = processor(memStore);

            List<PartitionProcessor.Record> log = new ArrayList<>(CompilerSimulation.records(11, 150));
            Random random = new Random(11);
            int at = 0;
            PartitionProcessor behindPg = null;
            PartitionProcessor behindMem = null;
            long rollback = 0;
            long resume = 0;
            while (at < log.size()) {
                if (at > 60 && rollback == 0) {
                    rollback =
                            pgActions.request("a", 2L, "alice", "contract", CLOCK.instant(), Topics.DEFAULT.events());
                    assertThat(mem.recordAction(rollback, "a", "rollback", 2L)).isTrue();
                    log.add(
                            at,
                            record(
                                    at,
                                    "a",
                                    EventCodec.encode(new RollbackRequested(
                                            "a", rollback, 2, "alice", "contract", CLOCK.instant()))));
                    renumber(log);
                } else if (at > 110 && resume == 0) {
                    resume = pgActions.request("a", null, "bob", "contract", CLOCK.instant(), Topics.DEFAULT.events());
                    assertThat(mem.recordAction(resume, "a", "resume", null)).isTrue();
                    String value =
                            EventCodec.encode(new ResumeRequested("a", resume, "bob", "contract", CLOCK.instant()));
                    log.add(at, record(at, "a", value));
                    log.add(at + 1, record(at + 1, "a", value)); // delivered twice: carried out once
                    renumber(log);
                }
                if (at > 30 && behindPg == null) {
                    // Writers that read the store now and try to write after the others moved on.
                    behindPg = processor(pg.partition());
                    behindMem = processor(memStore);
                }
                List<PartitionProcessor.Record> batch =
                        log.subList(at, Math.min(log.size(), at + 1 + random.nextInt(9)));
                assertThat(onMem.process(batch))
                        .isEqualTo(onPg.process(batch))
                        .isEqualTo(PartitionProcessor.Outcome.DONE);
                at += batch.size();
            }
            List<PartitionProcessor.Record> last = log.subList(log.size() - 3, log.size());
            assertThat(behindPg.process(last)).isEqualTo(PartitionProcessor.Outcome.STALE);
            assertThat(behindMem.process(last)).isEqualTo(PartitionProcessor.Outcome.STALE);

            for (String c : List.of("a", "b")) {
                List<VersionHistory.VersionInfo> pgVersions = pg.history().versions(c);
                List<MemoryPartitionStore.Version> memVersions = mem.versions(c);
                assertThat(memVersions)
                        .extracting(v -> v.seq() + " " + v.cause() + " " + v.settings())
                        .containsExactlyElementsOf(pgVersions.stream()
                                .map(v -> v.seq() + " " + v.cause() + " " + v.settings())
                                .toList());
                for (MemoryPartitionStore.Version v : memVersions) {
                    assertThat(v.rules())
                            .as("%s version %d", c, v.seq())
                            .isEqualTo(pg.history().rules(c, v.seq()));
                    assertThat(v.row().lineage())
                            .isEqualTo(pg.history().lineage(c, v.seq()).orElseThrow());
                }
                assertThat(memStore.versions().pinning(c).map(a -> a.id()))
                        .isEqualTo(pg.history().pinning(c).map(a -> a.id()));
            }
            assertThat(pg.history().versions("a")).hasSizeGreaterThan(5);
            assertThat(mem.actions().get(rollback).resultVersion)
                    .isEqualTo(pgActions.find(rollback).orElseThrow().resultVersion());
            assertThat(mem.actions().get(resume).resultVersion)
                    .isEqualTo(pgActions.find(resume).orElseThrow().resultVersion())
                    .isNotNull();

            JdbcClient sql = JdbcClient.create(db.dataSource());
            assertThat(mem.events())
                    .extracting(e -> e.offset() + " " + e.type() + " " + e.versionSeq())
                    .containsExactlyElementsOf(
                            sql.sql("SELECT kafka_offset, event_type, version_seq FROM cluster_event ORDER BY id")
                                    .query((rs, n) -> rs.getLong(1) + " " + rs.getString(2) + " " + rs.getObject(3))
                                    .list());
            assertThat(mem.deadLetters())
                    .extracting(Batch.DeadLetterRow::offset)
                    .hasSizeGreaterThan(1)
                    .containsExactlyElementsOf(sql.sql("SELECT kafka_offset FROM dead_letter ORDER BY id")
                            .query(Long.class)
                            .list());
            // What agents and the dead-letter topic receive, byte for byte (the api's action requests left out: the
            // memory
            // store has no api in front of it).
            List<Outbox.OutboxMessage> pgOutbox = pg.outbox().pending(10_000).stream()
                    .filter(m -> !m.topic().equals(Topics.DEFAULT.events()))
                    .toList();
            assertThat(mem.outbox())
                    .extracting(o -> o.topic() + " " + o.key() + " " + o.payload())
                    .containsExactlyElementsOf(pgOutbox.stream()
                            .map(m -> m.topic() + " " + m.key() + " " + m.payload())
                            .toList());

            // A rebuild reads back the same heads from either.
            Map<String, String> pgHeads = heads(processor(pg.partition()));
            assertThat(heads(processor(memStore))).isEqualTo(pgHeads).hasSize(2);
        }
    }

    private static Map<String, String> heads(PartitionProcessor p) {
        Map<String, String> out = new TreeMap<>();
        p.heads()
                .forEach((c, h) -> out.put(
                        c,
                        h.version() + " " + h.lineage() + " " + h.pin() + " "
                                + h.published().hashCode()));
        return out;
    }

    private static PartitionProcessor.Record record(long offset, String key, String value) {
        return new PartitionProcessor.Record(offset, key, value);
    }

    /** Offsets follow the records' places again after an insertion. */
    private static void renumber(List<PartitionProcessor.Record> log) {
        for (int i = 0; i < log.size(); i++) {
            PartitionProcessor.Record r = log.get(i);
            log.set(i, record(i, r.key(), r.value()));
        }
    }
}
