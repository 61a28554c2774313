package io.rulesync.api.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class WavesTest {
    private static final RolloutPolicy POLICY = RolloutPolicy.fromJson("""
            {"waves": [{"name": "canary", "nodes": ["n-7", "n-3"]}, {"name": "eu", "zone": "eu-1"},
                       {"name": "tenth", "percent": 10}, {"name": "rest", "percent": 100}]}""");

    @Test
    void namedNodesAndZonesFirstThenShares() {
        Map<String, String> nodes = new TreeMap<>();
        for (int i = 0; i < 1000; i++) {
            nodes.put("n-" + i, i % 100 == 0 ? "eu-1" : "us-1");
        }
        Waves w = Waves.assign(POLICY, "shop", nodes, Map.of());
        assertThat(w.nodes(0)).containsExactly("n-3", "n-7");
        assertThat(w.nodes(1)).hasSize(10).allMatch(n -> nodes.get(n).equals("eu-1"));
        // A tenth of the 988 left, near enough: the cut is a hash's, so that it never depends on the other nodes.
        assertThat(w.nodes(2).size()).isBetween(70, 130);
        assertThat(w.nodes(0).size()
                        + w.nodes(1).size()
                        + w.nodes(2).size()
                        + w.nodes(3).size())
                .isEqualTo(1000);
    }

    @Test
    void aNodesWaveDoesNotDependOnTheOtherNodesOrTheirOrder() {
        Map<String, String> small = new HashMap<>();
        Map<String, String> large = new TreeMap<>();
        for (int i = 0; i < 2000; i++) {
            large.put("n-" + i, "us-1");
            if (i % 3 == 0) {
                small.put("n-" + i, "us-1");
            }
        }
        Waves a = Waves.assign(POLICY, "shop", small, Map.of());
        Waves b = Waves.assign(POLICY, "shop", large, Map.of());
        for (int wave = 0; wave < a.count(); wave++) {
            for (String n : a.nodes(wave)) {
                assertThat(b.nodes(wave)).as(n).contains(n);
                assertThat(Waves.waveOf(POLICY, "shop", n, "us-1", Map.of())).isEqualTo(wave);
            }
        }
        // Another cluster's canary share is another set of nodes: one cluster's first tenth is not every cluster's.
        assertThat(Waves.assign(POLICY, "bank", large, Map.of()).nodes(2)).isNotEqualTo(b.nodes(2));
    }

    @Test
    void aSelectorTakesTheNodesItsLabelsPickBeforeAnySharesAndAnEarlierWaveKeepsItsNodes() {
        RolloutPolicy p = RolloutPolicy.fromJson("""
                {"waves": [{"name": "canary", "nodes": ["n-1"]},
                           {"name": "gpu", "selector": {"matchLabels": {"pool": "gpu"}}},
                           {"name": "rest", "percent": 100}]}""");
        Map<String, String> zones = new TreeMap<>();
        Map<String, Map<String, String>> labels = new HashMap<>();
        for (int i = 0; i < 100; i++) {
            zones.put("n-" + i, "");
            if (i % 10 == 1) {
                labels.put("n-" + i, Map.of("pool", "gpu"));
            }
        }
        Waves w = Waves.assign(p, "shop", zones, labels);
        assertThat(w.nodes(0)).containsExactly("n-1");
        assertThat(w.nodes(1))
                .containsExactlyInAnyOrder("n-11", "n-21", "n-31", "n-41", "n-51", "n-61", "n-71", "n-81", "n-91");
        assertThat(w.nodes(2)).hasSize(90);
        // A node whose labels are not known yet (a row still to come) is placed as one without labels.
        assertThat(Waves.waveOf(p, "shop", "n-11", "", Map.of())).isEqualTo(2);
    }

    @Test
    void nodesNoWaveTakesJoinTheLast() {
        RolloutPolicy p = RolloutPolicy.fromJson("{\"waves\": [{\"nodes\": [\"a\"]}, {\"percent\": 50}]}");
        Waves w = Waves.assign(p, "c", Map.of("a", "", "b", "", "c", "", "d", "", "e", "", "f", ""), Map.of());
        assertThat(w.nodes(0)).containsExactly("a");
        assertThat(w.nodes(1)).containsExactlyInAnyOrder("b", "c", "d", "e", "f");
    }
}
