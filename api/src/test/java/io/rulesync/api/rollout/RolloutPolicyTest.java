package io.rulesync.api.rollout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RolloutPolicyTest {
    @Test
    void readsWavesFailureConditionAndActionAndWritesThemBack() {
        RolloutPolicy p = RolloutPolicy.fromJson("""
                {"waves": [{"name": "canary", "nodes": ["n1", "n2"], "bake": "90s"}, {"zone": "eu-1"}, {"name": "rest", "percent": 100}],
                 "failWhen": {"unacked": 0.1, "ackTimeout": "5m"}, "onFailure": "rollback"}""");
        assertThat(p.waves()).extracting(RolloutPolicy.Wave::name).containsExactly("canary", "wave-2", "rest");
        assertThat(p.waves().get(0).nodes()).containsExactly("n1", "n2");
        assertThat(p.waves().get(0).bake()).isEqualTo(Duration.ofSeconds(90));
        assertThat(p.waves().get(1).zone()).isEqualTo("eu-1");
        assertThat(p.waves().get(2).bake()).isZero();
        assertThat(p.unacked()).isEqualTo(0.1);
        assertThat(p.ackTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(p.onFailure()).isEqualTo(RolloutPolicy.OnFailure.ROLLBACK);
        assertThat(RolloutPolicy.fromJson(p.toJson())).isEqualTo(p);

        RolloutPolicy defaults = RolloutPolicy.fromJson("{\"waves\": [{\"percent\": 100}]}");
        assertThat(defaults.onFailure()).isEqualTo(RolloutPolicy.OnFailure.HALT);
        assertThat(defaults.ackTimeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(defaults.unacked()).isZero();
    }

    @Test
    void aSelectorMatchesLabelsAsKubernetesDoesAndIsWrittenBack() {
        RolloutPolicy p = RolloutPolicy.fromJson("""
                {"waves": [{"name": "gpu", "selector": {"matchLabels": {"pool": "gpu"},
                            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["prod"]},
                                                 {"key": "spot", "operator": "DoesNotExist"}]}},
                           {"percent": 100}]}""");
        NodeSelector s = p.waves().get(0).selector();
        assertThat(p.selectsByLabel()).isTrue();
        assertThat(s.matches(Map.of("pool", "gpu"))).isTrue();
        assertThat(s.matches(Map.of("pool", "gpu", "tier", "dev"))).isTrue();
        assertThat(s.matches(Map.of("pool", "gpu", "tier", "prod"))).as("NotIn").isFalse();
        assertThat(s.matches(Map.of("pool", "gpu", "spot", "true")))
                .as("DoesNotExist")
                .isFalse();
        assertThat(s.matches(Map.of("pool", "cpu"))).as("matchLabels").isFalse();
        assertThat(s.matches(Map.of())).isFalse();
        NodeSelector in = RolloutPolicy.fromJson("""
                {"waves": [{"selector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]},
                                                              {"key": "ssd", "operator": "Exists"}]}}]}""").waves().get(0).selector();
        assertThat(in.matches(Map.of("zone", "b", "ssd", ""))).isTrue();
        assertThat(in.matches(Map.of("zone", "c", "ssd", ""))).isFalse();
        assertThat(in.matches(Map.of("zone", "a"))).isFalse();
        assertThat(RolloutPolicy.fromJson(p.toJson())).isEqualTo(p);
        assertThat(RolloutPolicy.fromJson("{\"waves\": [{\"nodes\": [\"a\"]}]}").selectsByLabel())
                .isFalse();
    }

    @Test
    void eachMistakeIsNamedByItsField() {
        for (List<String> c : List.of(
                List.of("{}", "waves: a list of at least one wave is required"),
                List.of(
                        "{\"waves\": [{\"nodes\": [\"a\"], \"percent\": 5}]}",
                        "waves[0]: give exactly one of nodes, zone, selector and percent"),
                List.of(
                        "{\"waves\": [{\"selector\": {}}]}",
                        "waves[0].selector: selects every node; give at least one of"),
                List.of(
                        "{\"waves\": [{\"selector\": {\"matchLabel\": {}}}]}",
                        "waves[0].selector.matchLabel: unknown field"),
                List.of(
                        "{\"waves\": [{\"selector\": {\"matchLabels\": {\"pool\": \"a b\"}}}]}",
                        "waves[0].selector.matchLabels.pool: "),
                List.of(
                        "{\"waves\": [{\"selector\": {\"matchExpressions\": [{\"key\": \"pool\", \"operator\": \"Equals\"}]}}]}",
                        "waves[0].selector.matchExpressions[0].operator: 'Equals' is not In, NotIn, Exists or DoesNotExist"),
                List.of(
                        "{\"waves\": [{\"selector\": {\"matchExpressions\": [{\"key\": \"pool\", \"operator\": \"In\"}]}}]}",
                        "waves[0].selector.matchExpressions[0].values: In needs at least one value"),
                List.of(
                        "{\"waves\": [{\"selector\": {\"matchExpressions\": [{\"key\": \"-x\", \"operator\": \"Exists\"}]}}]}",
                        "waves[0].selector.matchExpressions[0].key: "),
                List.of(
                        "{\"waves\": [{\"selector\": {\"matchExpressions\": [{\"key\": \"gpu\", \"operator\": \"Exists\", "
                                + "\"values\": [\"1\"]}]}}]}",
                        "waves[0].selector.matchExpressions[0].values: Exists takes no values"),
                List.of("{\"waves\": [{\"percent\": 0}]}", "waves[0].percent: '0' is not a whole number 1-100"),
                List.of("{\"waves\": [{\"percent\": 12.5}]}", "waves[0].percent: '12.5' is not a whole number 1-100"),
                List.of(
                        "{\"waves\": [{\"nodes\": []}]}",
                        "waves[0].nodes: a list of at least one node name is required"),
                List.of("{\"waves\": [{\"nodes\": [\"Bad_Name\"]}]}", "waves[0].nodes[0]: "),
                List.of(
                        "{\"waves\": [{\"percent\": 10, \"bake\": \"soon\"}]}",
                        "waves[0].bake: 'soon' is not a duration such as 30s"),
                List.of(
                        "{\"waves\": [{\"name\": \"a\", \"percent\": 10}, {\"name\": \"a\", \"percent\": 100}]}",
                        "waves[1].name: 'a' names an earlier wave too"),
                List.of("{\"waves\": [{\"percent\": 10, \"bak\": \"1s\"}]}", "waves[0].bak: unknown field"),
                List.of(
                        "{\"waves\": [{\"percent\": 10}], \"failWhen\": {\"unacked\": 1}}",
                        "failWhen.unacked: '1' is not a share"),
                List.of(
                        "{\"waves\": [{\"percent\": 10}], \"failWhen\": {\"ackTimeout\": \"0s\"}}",
                        "failWhen.ackTimeout: must be more than 0"),
                List.of(
                        "{\"waves\": [{\"percent\": 10}], \"onFailure\": \"panic\"}",
                        "onFailure: 'panic' is not halt or rollback"),
                List.of("[1]", "expected an object with waves"),
                List.of("{", "not JSON"))) {
            assertThatThrownBy(() -> RolloutPolicy.fromJson(c.get(0)))
                    .as(c.get(0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(c.get(1));
        }
    }
}
