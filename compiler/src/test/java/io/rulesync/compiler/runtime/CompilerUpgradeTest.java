package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.nftables.NftPart;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import io.rulesync.store.Outbox;
import io.rulesync.store.VersionHistory;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A compiler that compiles the stored events differently from the newest stored version (an upgrade)
 * stores a version of its own, cause {@code compilerUpgrade}, before any new event: its diff is exactly
 * what the compiler changed, and the next event's version shows only what that event changed.
 */
@RequiresPostgres
class CompilerUpgradeTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);

    private static PartitionProcessor processor(CompilerStores store) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE);
    }

    @Test
    void rulesTheStoredVersionDoesNotHoldGetAVersionOfTheirOwnBeforeAnyNewEvent() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor first = processor(store);
            for (List<PartitionProcessor.Record> b : ScriptedEvents.batches()) {
                first.process(b);
            }
            assertThat(store.history().head("a")).isEqualTo(3);
            assertThat(first.storeRecompiledVersions())
                    .as("the compiler that wrote them agrees with itself")
                    .isEmpty();

            // As the compiler before nftables mode wrote it: version 4 of a holds one Service's fragment without its
            // nftables part.
            ClusterRules v3 = store.history().rules("a", 3);
            Map.Entry<FragmentKey, RuleFragment> web = v3.fragments().entrySet().stream()
                    .filter(e -> e.getKey().unit().id().startsWith("shop/web:"))
                    .findFirst()
                    .orElseThrow();
            RuleFragment old =
                    RuleFragment.parse(web.getValue().withNftables(NftPart.NONE).text());
            long at = first.position();
            store.batches()
                    .commit(new Batch(
                            "compiler",
                            Topics.DEFAULT.events(),
                            0,
                            at,
                            at,
                            List.of(),
                            List.of(),
                            List.of(new Batch.VersionRow(
                                    "a",
                                    4,
                                    CLOCK.instant(),
                                    "{}",
                                    "{}",
                                    new RulesDiff(
                                            List.of(new RulesDiff.FragmentChange(web.getKey(), web.getValue(), old)),
                                            List.of()))),
                            List.of(),
                            List.of()));
            int outboxBefore = store.outbox().pending(1000).size();

            PartitionProcessor upgraded = processor(store);
            assertThat(upgraded.storeRecompiledVersions()).containsExactly("a");
            VersionHistory.VersionInfo v5 = store.history().version("a", 5).orElseThrow();
            assertThat(v5.cause()).contains("\"compilerUpgrade\":").contains("\"events\":0");
            assertThat(v5.fragmentsChanged()).isEqualTo(1);
            assertThat(store.history().rules("a", 5)).isEqualTo(v3);
            List<Outbox.OutboxMessage> outbox = store.outbox().pending(1000);
            assertThat(outbox).hasSize(outboxBefore + 1);
            RulesDelta delta = RulesDelta.fromJson(outbox.get(outbox.size() - 1).payload());
            assertThat(delta.base()).isEqualTo(4);
            assertThat(delta.target()).isEqualTo(5);
            // On the wire a change carries what the fragment becomes: today's compile of it.
            assertThat(delta.diff().fragments()).singleElement().satisfies(c -> {
                assertThat(c.key()).isEqualTo(web.getKey());
                assertThat(c.after()).isEqualTo(web.getValue());
            });

            // Done once: neither this processor nor a new one stores another.
            assertThat(upgraded.storeRecompiledVersions()).isEmpty();
            assertThat(processor(store).storeRecompiledVersions()).isEmpty();
            assertThat(store.history().head("b")).isEqualTo(4);

            // The next event's version shows only what it changed.
            long offset = upgraded.position();
            upgraded.process(List.of(
                    new PartitionProcessor.Record(offset, "a", ScriptedEvents.service("a", "cache", "10.96.0.7"))));
            assertThat(store.history().version("a", 6).orElseThrow().cause()).contains("Service shop/cache");
            assertThat(store.history().rules("a", 6).fragments()).containsAllEntriesOf(v3.fragments());
        }
    }
}
