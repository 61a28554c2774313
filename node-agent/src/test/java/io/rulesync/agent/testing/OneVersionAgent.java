package io.rulesync.agent.testing;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.topic.Topics;
import io.rulesync.testsupport.cluster.Fixtures;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * An agent of one node in a namespace lab, whose cluster has one version: the kernel tests that compile a cluster and
 * watch what the agent makes of it. Its api and broker are addresses nothing answers at; the agent is driven directly.
 */
public final class OneVersionAgent {
    private OneVersionAgent() {}

    /** Version 1 of {@code cluster}: {@code rules}, for whichever node asks. */
    public static SnapshotSource snapshots(String cluster, ClusterRules rules) {
        return new SnapshotSource() {
            @Override
            public RulesSnapshot latest(String c, String node) {
                return at(c, node, 1);
            }

            @Override
            public RulesSnapshot at(String c, String node, long version) {
                return new RulesSnapshot(cluster, 1, Fixtures.T, rules.forNode(node));
            }
        };
    }

    /** The configuration of {@code node}'s agent in {@code netns}, IPv4, asked for {@code mode}. */
    public static AgentConfig config(
            String cluster, String node, String netns, Path stateDir, ProxyMode mode, WhenUnavailable whenUnavailable) {
        return new AgentConfig(
                cluster,
                node,
                "127.0.0.1:9",
                Map.of(),
                Topics.DEFAULT,
                URI.create("http://127.0.0.1:9"),
                null,
                List.of(IpFamily.IPV4),
                null,
                netns,
                stateDir,
                Duration.ofSeconds(30),
                50,
                mode,
                whenUnavailable);
    }
}
