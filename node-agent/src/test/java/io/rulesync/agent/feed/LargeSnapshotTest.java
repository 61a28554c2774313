package io.rulesync.agent.feed;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.testing.History;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.RulesSnapshot;
import org.junit.jupiter.api.Test;

/** A node's snapshot of a big cluster is tens of MB: it must read back whole. */
class LargeSnapshotTest {
    @Test
    void aSnapshotAboveTheParsersDefaultLimitReadsBack() {
        History h = new History(3_000);
        RulesSnapshot s = h.snapshot(1, History.NODE);
        String json = s.toJson();
        assertThat(json.length())
                .as("above the parser's default limit of 3 MiB")
                .isGreaterThan(3 * 1024 * 1024);
        long t0 = System.nanoTime();
        RulesSnapshot back = RulesSnapshot.fromJson(json);
        System.out.printf(
                "read a %d MB snapshot in %d ms%n", json.length() >> 20, (System.nanoTime() - t0) / 1_000_000);
        assertThat(back.rules().ruleSet(History.NODE, IpFamily.IPV4))
                .isEqualTo(s.rules().ruleSet(History.NODE, IpFamily.IPV4));
    }
}
