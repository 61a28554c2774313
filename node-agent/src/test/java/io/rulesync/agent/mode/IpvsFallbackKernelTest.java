package io.rulesync.agent.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.Agent;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.agent.testing.OneVersionAgent;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.testing.needs.KernelFeature;
import io.rulesync.testing.needs.RequiresKernelWithout;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.netns.NetnsLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * IPVS mode on a kernel without IPVS (this machine's), for real: the agent checks the node as
 * kube-proxy does, then either programs iptables mode instead, with traffic flowing and the acks
 * saying why, or refuses and applies nothing, acking FAILED with the reason. Where the kernel has
 * IPVS the probe must find it usable instead.
 */
@RequiresNetns
@RequiresTool({"ipset", "ipvsadm"})
class IpvsFallbackKernelTest {
    private static final String CLUSTER = "shop";
    private static final String CLUSTER_IP = "10.96.0.10";

    @TempDir
    Path dir;

    private NetnsLab lab;
    /** What the agent logs during the test, opened with it. */
    private final AgentLogs log = new AgentLogs();

    private ClusterRules rules;

    /** A namespace lab of its own per test: what one test programs must not be what the next one sees. */
    @BeforeEach
    void lab() {
        lab = new NetnsLab(2);
        for (int pod = 0; pod < 2; pod++) {
            lab.serve(pod, "tcp", 8080, "pod" + pod);
        }
        ClusterSettings settings =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.244.0.0/16")), false, 14, List.of());
        rules = ClusterHead.empty(CLUSTER)
                .apply(List.of(
                        new SettingsChanged(CLUSTER, settings, Fixtures.T),
                        Fixtures.upsert(CLUSTER, Fixtures.node("node-a", lab.nodeIPv4())),
                        Fixtures.upsert(CLUSTER, Fixtures.service("web", CLUSTER_IP)),
                        Fixtures.upsert(CLUSTER, Fixtures.slice("web", "node-a", lab.podIPv4(0), lab.podIPv4(1)))))
                .next()
                .published();
    }

    @AfterEach
    void close() {
        log.close();
        if (lab != null) {
            lab.close();
        }
    }

    private Agent agent(WhenUnavailable when, List<NodeAck> acks) throws Exception {
        SnapshotSource snapshots = OneVersionAgent.snapshots(CLUSTER, rules);
        AgentConfig config = OneVersionAgent.config(
                CLUSTER, "node-a", lab.nodeNs(), Files.createTempDirectory(dir, "state"), ProxyMode.IPVS, when);
        return config.agent(snapshots, acks::add);
    }

    /** The pods that answer 20 connections to the Service (each of two endpoints, as rules pick them at random). */
    private Set<String> answering() {
        return answering(20, 2000);
    }

    private Set<String> answering(int connections, int timeoutMillis) {
        Set<String> ids = new TreeSet<>();
        for (String line : lab.probe(lab.clientNs(), "tcp", CLUSTER_IP, 80, connections, timeoutMillis)) {
            if (line.startsWith("OK ")) {
                ids.add(line.split(" ")[1]);
            }
        }
        return ids;
    }

    @Test
    void theProbeSaysWhyThisKernelCannotRunIpvs() {
        Optional<String> problem = IpvsProbe.problem(HostCommand.PROCESSES.inNetns(lab.nodeNs()));
        System.out.println("IPVS on this kernel: " + problem.orElse("usable"));
        if (KernelFeature.IPVS.present()) {
            assertThat(problem).isEmpty();
        } else {
            // ipvsadm's own line, whether or not modprobe spoke before it (kmod installed, no module directory).
            assertThat(problem).contains("Can't initialize ipvs: Protocol not available");
        }
    }

    @Test
    @RequiresKernelWithout(KernelFeature.IPVS)
    void refusingAppliesNothingAndEveryAckSaysWhy() throws Exception {
        List<NodeAck> acks = new ArrayList<>();
        Agent agent = agent(WhenUnavailable.REFUSE, acks);
        agent.start();
        assertThat(acks).singleElement().satisfies(a -> {
            assertThat(a.status()).isEqualTo(NodeAck.Status.FAILED);
            assertThat(a.running()).isZero();
            assertThat(a.error())
                    .startsWith("ipvs mode was asked for and cannot be used (")
                    .endsWith("(--mode-unavailable=refuse)");
            assertThat(a.mode()).startsWith("iptables (ipvs unavailable: ");
        });
        assertThat(log.lines())
                .anyMatch(l -> l.startsWith("ipvs mode asked for, ipvs unavailable: ")
                        && l.endsWith("applying nothing (--mode-unavailable=refuse)"));
        assertThat(lab.exec(lab.nodeNs(), "iptables", "-t", "nat", "-S")
                        .orThrow()
                        .stdout())
                .doesNotContain("KUBE-SERVICES");
        // No rules, so nothing answers: a few tries suffice (one that would answer does so in milliseconds), where 20
        // unanswered tries of 2 s would take 40.
        assertThat(answering(3, 500)).isEmpty();
        agent.tick(); // no drift check, no repair: nothing here is the agent's
        assertThat(lab.exec(lab.nodeNs(), "iptables", "-t", "nat", "-S")
                        .orThrow()
                        .stdout())
                .doesNotContain("KUBE-");
    }

    @Test
    @RequiresKernelWithout(KernelFeature.IPVS)
    void fallingBackProgramsIptablesModeAndTheAcksSayWhy() throws Exception {
        List<NodeAck> acks = new ArrayList<>();
        agent(WhenUnavailable.FALLBACK, acks).start();
        assertThat(acks).singleElement().satisfies(a -> {
            assertThat(a.status()).isEqualTo(NodeAck.Status.APPLIED);
            assertThat(a.version()).isEqualTo(1);
            assertThat(a.mode())
                    .isEqualTo("iptables (ipvs unavailable: "
                            + IpvsProbe.problem(HostCommand.PROCESSES.inNetns(lab.nodeNs()))
                                    .orElseThrow() + ")");
        });
        assertThat(log.lines())
                .anyMatch(l -> l.endsWith("programming iptables mode instead (--mode-unavailable=fallback)"));
        assertThat(answering()).isEqualTo(Set.of("pod0", "pod1"));
    }
}
