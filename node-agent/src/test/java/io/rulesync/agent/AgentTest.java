package io.rulesync.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.MemoryNetfilter;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.apply.OwnedChains;
import io.rulesync.agent.apply.RestoreFailedException;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.feed.AckSink;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.feed.SnapshotUnavailableException;
import io.rulesync.agent.metrics.MetricsServer;
import io.rulesync.agent.mode.HollowMode;
import io.rulesync.agent.mode.IptablesMode;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.agent.mode.RefusingMode;
import io.rulesync.agent.state.StateFile;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.agent.testing.History;
import io.rulesync.exec.CommandRunner;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.rules.Variant;
import io.rulesync.testsupport.MutableClock;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's decisions, with the dry-run packet filter as its kernel and snapshots served from a compiled history. */
class AgentTest {
    @TempDir
    Path dir;

    History history;
    MemoryNetfilter kernel;
    List<NodeAck> acks;
    AgentLogs logs;
    int snapshotsServed;
    boolean apiDown;
    MutableClock clock;

    @BeforeEach
    void setUp() {
        history = new History(30);
        kernel = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        acks = new ArrayList<>();
        logs = new AgentLogs();
        clock = new MutableClock();
    }

    @AfterEach
    void tearDown() {
        logs.close();
    }

    Agent agent() {
        // A dry run's conntrack only logs; no host command may run here.
        CommandRunner none = (argv, stdin, timeout) -> {
            throw new AssertionError("a host command in a unit test: " + argv);
        };
        return agent(new IptablesMode(
                History.NODE,
                new Applier(List.of(kernel), null, clock),
                new Conntrack(none, true),
                Duration.ofSeconds(30),
                1_000));
    }

    Agent agent(KernelMode mode) {
        SnapshotSource snapshots = new SnapshotSource() {
            @Override
            public RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException {
                return at(cluster, node, history.latest());
            }

            @Override
            public RulesSnapshot at(String cluster, String node, long version) throws SnapshotUnavailableException {
                if (apiDown) {
                    throw new SnapshotUnavailableException("api down");
                }
                snapshotsServed++;
                return history.snapshot(version, node);
            }
        };
        AckSink sink = acks::add;
        return new Agent(
                History.CLUSTER,
                History.NODE,
                snapshots,
                mode,
                sink,
                new StateFile(dir, History.CLUSTER, History.NODE),
                clock,
                Duration.ofSeconds(30));
    }

    RuleSet expected(long v) {
        return history.rules(v).ruleSet(History.NODE, IpFamily.IPV4).orElseThrow();
    }

    void assertKernelHolds(long v) {
        for (Table t : Table.values()) {
            for (Chain c : expected(v).chains(t)) {
                assertThat(Applier.compare(kernel, t, c))
                        .as("version %d %s %s", v, t, c.name())
                        .isNull();
            }
        }
    }

    NodeAck lastAck() {
        return acks.get(acks.size() - 1);
    }

    @Test
    void startsWithAFullApplyThenFollowsDeltas() {
        Agent a = agent();
        a.start();
        assertKernelHolds(1);
        assertThat(lastAck()).extracting(NodeAck::version, NodeAck::status).containsExactly(1L, NodeAck.Status.APPLIED);
        assertThat(kernel.chain(Table.NAT, OwnedChains.CANARY)).isPresent();
        assertThat(kernel.chain(Table.FILTER, "INPUT").orElseThrow()).anyMatch(l -> l.endsWith("-j KUBE-FIREWALL"));
        Random r = new Random(3);
        for (int i = 0; i < 5; i++) {
            a.onDeltas(List.of(history.next(r, 2)));
            assertKernelHolds(history.latest());
            assertThat(lastAck().version()).isEqualTo(history.latest());
        }
        assertThat(snapshotsServed).isEqualTo(1);
        assertThat(acks).extracting(NodeAck::version).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        assertThat(lastAck().ruleCount()).isEqualTo(expected(6).ruleCount());
    }

    @Test
    void theMetricsAndHealthEndpointsServeTheAgentsCountersAndHealthOnAddressesOfTheirOwn() throws Exception {
        Agent a = agent();
        boolean[] alive = {true};
        InetSocketAddress any = new InetSocketAddress("127.0.0.1", 0);
        try (MetricsServer m = MetricsServer.start(any, any, a, History.CLUSTER, History.NODE, () -> alive[0])) {
            HttpClient http = HttpClient.newHttpClient();
            URI metricsAt = URI.create("http://127.0.0.1:" + m.metricsPort());
            URI healthzAt = URI.create("http://127.0.0.1:" + m.healthzPort());
            assertThat(m.metricsPort()).isNotEqualTo(m.healthzPort());
            assertThat(http.send(
                                    HttpRequest.newBuilder(healthzAt.resolve("/healthz"))
                                            .build(),
                                    BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(503);
            a.start();
            a.onDeltas(List.of(history.next(new Random(5), 2)));
            HttpResponse<String> health = http.send(
                    HttpRequest.newBuilder(healthzAt.resolve("/healthz")).build(), BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("running version 2");
            String metrics = http.send(
                            HttpRequest.newBuilder(metricsAt.resolve("/metrics"))
                                    .build(),
                            BodyHandlers.ofString())
                    .body();
            String tags = "{cluster=\"" + History.CLUSTER + "\",node=\"" + History.NODE + "\"}";
            assertThat(metrics)
                    .contains(
                            "rulesync_agent_applies_total" + tags + " 2.0",
                            "rulesync_agent_apply_failures_total" + tags + " 0.0",
                            "rulesync_agent_drift_repairs_total" + tags + " 0.0",
                            "rulesync_agent_running_version" + tags + " 2.0",
                            "rulesync_agent_apply_duration_seconds_count" + tags + " 2",
                            "rulesync_agent_ipvs_draining_real_servers" + tags + " 0.0");
            // Each address serves its own path only: the health port, open to the network, shows no metrics.
            assertThat(http.send(
                                    HttpRequest.newBuilder(healthzAt.resolve("/metrics"))
                                            .build(),
                                    BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(404);
            assertThat(http.send(
                                    HttpRequest.newBuilder(metricsAt.resolve("/healthz"))
                                            .build(),
                                    BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(404);
            alive[0] = false;
            assertThat(http.send(
                                    HttpRequest.newBuilder(healthzAt.resolve("/healthz"))
                                            .build(),
                                    BodyHandlers.ofString())
                            .body())
                    .contains("the agent loop stopped");
        }
        // One address for both serves both; either may be off.
        try (MetricsServer both = MetricsServer.start(
                new InetSocketAddress("127.0.0.1", 0), null, a, History.CLUSTER, History.NODE, () -> true)) {
            assertThat(both.healthzPort()).isEqualTo(-1);
        }
        int port = freePort();
        InetSocketAddress one = new InetSocketAddress("127.0.0.1", port);
        try (MetricsServer both = MetricsServer.start(one, one, a, History.CLUSTER, History.NODE, () -> true)) {
            HttpClient http = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + port);
            assertThat(both.metricsPort()).isEqualTo(port).isEqualTo(both.healthzPort());
            assertThat(http.send(
                                    HttpRequest.newBuilder(base.resolve("/metrics"))
                                            .build(),
                                    BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(200);
            assertThat(http.send(
                                    HttpRequest.newBuilder(base.resolve("/healthz"))
                                            .build(),
                                    BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(200);
        }
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void aGapIsClosedWithASnapshot() {
        Agent a = agent();
        a.start();
        Random r = new Random(4);
        history.next(r, 2); // version 2 never reaches the agent
        a.onDeltas(List.of(history.next(r, 2)));
        assertKernelHolds(3);
        assertThat(a.running()).isEqualTo(3);
        assertThat(snapshotsServed).isEqualTo(2);
        a.onDeltas(List.of(history.next(r, 2)));
        assertThat(a.running()).isEqualTo(4);
        a.onDeltas(List.of(history.next(r, 0)));
        assertThat(lastAck().version()).isEqualTo(5);
    }

    /**
     * The control plane's database restored from a backup taken at version 2: version 3, which the node runs, is lost, and
     * the number comes again for another change. The delta to version 4 follows that other version 3; applied on top of
     * what the node runs, it would leave the lost change in the kernel for good. Its lineage says so, and the node loads
     * version 4 whole instead.
     */
    @Test
    void aDeltaThatFollowsAVersionOfAnotherHistoryIsNotAppliedTheNodeLoadsTheRestoredOne() {
        Agent a = agent();
        Random r = new Random(11);
        String lost = runVersion3ThenRestoreTo2(a, r);
        a.onDeltas(List.of(history.next(r, 3)));

        assertThat(a.running()).isEqualTo(4);
        assertThat(a.runningLineage()).isEqualTo(history.lineage(4));
        assertKernelHolds(4);
        assertThat(snapshotsServed).isEqualTo(2);
        assertThat(logs.lines())
                .anyMatch(l -> l.startsWith("loading version 4 (delta 3->4 follows version 3 of lineage "
                        + history.lineage(3).substring(0, 12) + ", but this node runs version 3 of lineage "
                        + lost.substring(0, 12)));
    }

    /**
     * Starts {@code a} and takes it to version 3; then the history is restored to version 2 and a version 3 of its own
     * (another change, which never reaches {@code a}) is made. Returns the lineage of the lost version 3.
     */
    private String runVersion3ThenRestoreTo2(Agent a, Random r) {
        a.start();
        a.onDeltas(List.of(history.next(r, 3)));
        a.onDeltas(List.of(history.next(r, 3)));
        String lost = a.runningLineage();
        assertThat(a.running()).isEqualTo(3);
        history.restoredTo(2);
        history.next(r, 3);
        assertThat(history.lineage(3)).isNotEqualTo(lost);
        return lost;
    }

    /** A restart after such a restore: the state file's claim is of the lost history, so the kernel is loaded in full. */
    @Test
    void aRestartDoesNotTrustAClaimOfAVersionOfAnotherHistory() {
        runVersion3ThenRestoreTo2(agent(), new Random(12));

        Agent second = agent();
        second.start();
        assertThat(second.running()).isEqualTo(3);
        assertThat(second.runningLineage()).isEqualTo(history.lineage(3));
        assertKernelHolds(3);
        assertThat(logs.lines())
                .anyMatch(l -> l.startsWith("the kernel holds version 3 of lineage ")
                        && l.endsWith("(the control plane's database was restored from a backup); applying in full"));
    }

    /** A hollow agent (fleet benchmarks): the agent's own work and acks, no kernel; what is refused is still refused. */
    @Test
    void aHollowAgentFollowsAndAcksEveryVersionAndStillRefusesWhatTheGrammarRefuses() {
        Agent a = agent(new HollowMode());
        a.start();
        Random r = new Random(5);
        a.onDeltas(List.of(history.next(r, 2)));
        a.onDeltas(List.of(history.next(r, 2), history.next(r, 2)));
        assertThat(acks)
                .extracting(NodeAck::version, NodeAck::status, NodeAck::mode)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1L, NodeAck.Status.APPLIED, "hollow"),
                        org.assertj.core.groups.Tuple.tuple(2L, NodeAck.Status.APPLIED, "hollow"),
                        org.assertj.core.groups.Tuple.tuple(4L, NodeAck.Status.APPLIED, "hollow"));
        assertThat(kernel.dump())
                .as("no kernel was touched")
                .isEqualTo(new MemoryNetfilter(IpFamily.IPV4, null, "n").dump());
        // A gap is closed with a snapshot, as a full agent does.
        history.next(r, 2);
        a.onDeltas(List.of(history.next(r, 2)));
        assertThat(lastAck().version()).isEqualTo(6);
        assertThat(snapshotsServed).isEqualTo(2);

        RuleFragment evil = RuleFragment.parse("*nat\n-A KUBE-SERVICES -s 203.0.113.9/32 -j ACCEPT\n");
        FragmentKey key = new FragmentKey(IpFamily.IPV4, Unit.parse("ns1/evil:80/TCP"), Variant.ALL);
        a.onDeltas(List.of(new RulesDelta(
                History.CLUSTER,
                6,
                7,
                Instant.now(),
                new RulesDiff(List.of(new RulesDiff.FragmentChange(key, null, evil)), List.of()))));
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(lastAck().running()).isEqualTo(6);
    }

    @Test
    void aDeltaOutsideTheGrammarIsRefusedBeforeTheKernelSeesIt() {
        Agent a = agent();
        a.start();
        String before = kernel.dump();
        RuleFragment evil = RuleFragment.parse("*nat\n-A KUBE-SERVICES -s 203.0.113.9/32 -j ACCEPT\n");
        FragmentKey key = new FragmentKey(IpFamily.IPV4, Unit.parse("ns1/evil:80/TCP"), Variant.ALL);
        a.onDeltas(List.of(new RulesDelta(
                History.CLUSTER,
                1,
                2,
                Instant.now(),
                new RulesDiff(List.of(new RulesDiff.FragmentChange(key, null, evil)), List.of()))));
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(lastAck().error())
                .contains("ns1/evil:80/TCP")
                .contains("KUBE-SERVICES")
                .contains("ACCEPT");
        assertThat(lastAck().running()).isEqualTo(1);
        assertThat(kernel.dump()).isEqualTo(before);
    }

    @Test
    void aBurstOfDeltasIsAppliedAsOneRestore() {
        Agent a = agent();
        a.start();
        Random r = new Random(9);
        List<RulesDelta> burst = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            burst.add(history.next(r, 2));
        }
        long appliesBefore = a.applies();
        a.onDeltas(burst);
        assertThat(a.applies() - appliesBefore).isEqualTo(1);
        assertKernelHolds(6);
        assertThat(lastAck().version()).isEqualTo(6);
        assertThat(lastAck().ruleCount()).isEqualTo(expected(6).ruleCount());
    }

    @Test
    void aRedeliveredDeltaIsIgnored() {
        Agent a = agent();
        a.start();
        RulesDelta d = history.next(new Random(5), 2);
        a.onDeltas(List.of(d, d));
        assertThat(acks).extracting(NodeAck::version).containsExactly(1L, 2L);
    }

    @Test
    void aFailedApplyKeepsTheLastGoodRulesAndBacksOff() throws Exception {
        Agent a = agent();
        a.start();
        // Someone deletes a rule the next delta must delete: the restore fails as a whole.
        RulesDelta d = history.next(
                new Random(6) {
                    @Override
                    public int nextInt(int bound) {
                        return 1; // op 1: remove Service 1
                    }
                },
                1);
        String victim = expected(1).nat().stream()
                .filter(c -> c.name().equals("KUBE-SERVICES"))
                .findFirst()
                .orElseThrow()
                .rules()
                .stream()
                .filter(rule -> rule.contains("ns1/svc1:"))
                .findFirst()
                .orElseThrow();
        kernel.restore("*nat\n-D KUBE-SERVICES " + victim + "\nCOMMIT\n");
        a.onDeltas(List.of(d));
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(lastAck().error()).contains("KUBE-SERVICES");
        assertThat(lastAck().running()).isEqualTo(1);
        assertThat(a.running()).isEqualTo(1);
        int served = snapshotsServed;
        a.onDeltas(List.of(history.next(new Random(7), 1)));
        a.tick();
        assertThat(snapshotsServed).as("no retry before the back-off").isEqualTo(served);
        clock.advance(Duration.ofSeconds(2));
        a.tick();
        // The retry moves from version 1 again and fails the same way: the kernel still lacks the rule.
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(a.failures()).isEqualTo(2);
        // The drift check finds KUBE-SERVICES short of a rule and rewrites it; then the retry succeeds.
        assertThat(a.verify().repaired()).isGreaterThan(0);
        clock.advance(Duration.ofSeconds(5));
        a.tick();
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.APPLIED);
        assertKernelHolds(history.latest());
    }

    /**
     * The state directory full: the kernel's write of the state file fails with ENOSPC (the file is a link to
     * {@code /dev/full}, which the kernel answers so, with no disk to fill). The version is applied, the ack says FAILED
     * with the reason and that the node runs it, nothing half-written is left, nothing is retried; once there is room
     * again the next version is applied and recorded as usual.
     */
    @Test
    void aFullStateDirectoryIsReportedAndTheAgentGoesOn() throws Exception {
        Path full = Path.of("/dev/full");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isWritable(full), "needs Linux's /dev/full");
        StateFile state = new StateFile(dir, History.CLUSTER, History.NODE);
        Path tmp = state.path().resolveSibling(state.path().getFileName() + ".tmp");
        Files.createSymbolicLink(tmp, full);
        Agent a = agent();
        a.start();
        assertKernelHolds(1);
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(lastAck().running()).as("the node runs it").isEqualTo(1);
        assertThat(lastAck().error())
                .startsWith("applied version 1, but cannot record it (cannot write " + state.path())
                .contains("No space left on device")
                .endsWith("; a restart will load in full");
        assertThat(a.running()).isEqualTo(1);
        assertThat(state.read()).as("no claim a restart would trust").isEmpty();
        assertThat(Files.exists(tmp, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                .as("nothing half-written kept")
                .isFalse();
        int served = snapshotsServed;
        clock.advance(Duration.ofMinutes(1));
        a.tick();
        assertThat(snapshotsServed)
                .as("nothing to retry: the kernel holds the version")
                .isEqualTo(served);

        a.onDeltas(List.of(history.next(new Random(8), 1)));
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.APPLIED);
        assertThat(state.read()).hasValue(new StateFile.Claim(history.latest(), history.lineage(history.latest())));
        assertKernelHolds(history.latest());
    }

    @Test
    void driftIsRepairedAndAFlushedTableReloaded() throws Exception {
        Agent a = agent();
        a.start();
        Chain svc = expected(1).nat().stream()
                .filter(c -> c.name().startsWith("KUBE-SVC-"))
                .findFirst()
                .orElseThrow();
        kernel.restore("*nat\n-A " + svc.name() + " -j RETURN\nCOMMIT\n*filter\n-D INPUT -j KUBE-FIREWALL\nCOMMIT\n");
        assertThat(a.verify().repaired()).isEqualTo(2);
        assertKernelHolds(1);
        assertThat(a.verify().problems()).isEmpty();
        kernel.restore("*nat\n-X " + OwnedChains.CANARY + "\nCOMMIT\n");
        a.verify();
        assertThat(kernel.chain(Table.NAT, OwnedChains.CANARY)).isPresent();
        assertKernelHolds(1);
        assertThat(a.repairs()).isEqualTo(3);
    }

    @Test
    void ticksReadEveryServiceChainBackInTurn() throws Exception {
        Agent a = agent();
        a.start();
        Chain last = expected(1).nat().get(expected(1).nat().size() - 1);
        kernel.restore("*nat\n-A " + last.name() + " -j RETURN\nCOMMIT\n");
        for (int i = 0; i < 120 && a.repairs() == 0; i++) {
            clock.advance(Duration.ofSeconds(1));
            a.tick();
        }
        assertThat(a.repairs()).isEqualTo(1);
        assertKernelHolds(1);
        assertThat(logs.lines()).anyMatch(l -> l.contains("drift repaired (1)") && l.contains(last.name()));
    }

    @Test
    void aRestartedAgentMovesOnIncrementally() {
        Agent first = agent();
        first.start();
        Random r = new Random(8);
        first.onDeltas(List.of(history.next(r, 2)));
        history.next(r, 2); // published while no agent runs
        history.next(r, 2);
        Agent second = agent();
        second.start();
        assertKernelHolds(4);
        assertThat(logs.lines()).anyMatch(l -> l.contains("kernel holds version 2 from an earlier run"));
        assertThat(kernel.chain(Table.NAT, "KUBE-SERVICES")).isPresent();
    }

    /** What a SIGKILL does to the agent in the middle of an apply: nothing after it runs. */
    static final class Killed extends Error {
        Killed() {
            super("killed", null, false, false);
        }
    }

    @Test
    void aRunKilledDuringAFullLoadLeavesNoClaimAndTheNextRunLoadsInFull() {
        Agent first = agent();
        first.start();
        first.onDeltas(List.of(history.next(new Random(3), 2)));
        assertKernelHolds(2);

        // A reboot: the kernel's rules are gone, the state file (version 2) stays. The next run starts a full load
        // (several
        // restores) and is killed in the middle of it, once the canaries are in.
        MemoryNetfilter rebooted = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        kernel = rebooted;
        Netfilter dying = new Netfilter() {
            @Override
            public IpFamily family() {
                return rebooted.family();
            }

            @Override
            public String mode() {
                return rebooted.mode();
            }

            @Override
            public void restore(String script) throws RestoreFailedException {
                rebooted.restore(script);
                System.out.println("RESTORE " + script.lines().count() + " lines; canaries "
                        + rebooted.chain(Table.FILTER, "KUBE-PROXY-CANARY").isPresent() + " "
                        + rebooted.chain(Table.NAT, "KUBE-PROXY-CANARY").isPresent());
                if (rebooted.chain(Table.NAT, "KUBE-PROXY-CANARY").isPresent()
                        && rebooted.chain(Table.FILTER, "KUBE-PROXY-CANARY").isPresent()) {
                    throw new Killed();
                }
            }

            @Override
            public Optional<List<String>> chain(Table table, String chain) {
                return rebooted.chain(table, chain);
            }

            @Override
            public List<String> chainNames(Table table) {
                return rebooted.chainNames(table);
            }

            @Override
            public String printed(Table table, String chain, String rule) {
                return rebooted.printed(table, chain, rule);
            }
        };
        CommandRunner none = (argv, stdin, timeout) -> {
            throw new AssertionError("a host command in a unit test: " + argv);
        };
        Agent killed = agent(new IptablesMode(
                History.NODE,
                new Applier(List.of(dying), null, clock),
                new Conntrack(none, true),
                Duration.ofSeconds(30),
                1_000));
        assertThatThrownBy(killed::start).isInstanceOf(Killed.class);

        // The kernel holds part of a full load, canaries included. The state file's claim of version 2, written before
        // the
        // reboot, is false: the next run must load in full rather than move on from it.
        Agent next = agent();
        next.start();
        assertThat(logs.lines()).noneMatch(l -> l.contains("kernel holds version 2 from an earlier run"));
        assertKernelHolds(2);
        assertThat(lastAck().running()).isEqualTo(2);
    }

    @Test
    void anUnavailableApiIsRetriedWithBackOff() {
        apiDown = true;
        Agent a = agent();
        a.start();
        assertThat(a.running()).isEqualTo(-1);
        assertThat(acks).isEmpty();
        apiDown = false;
        a.tick();
        assertThat(a.running()).isEqualTo(-1);
        clock.advance(Duration.ofSeconds(1));
        a.tick();
        assertThat(a.running()).isEqualTo(1);
    }

    @Test
    void aRefusingModeAppliesNothingAndAcksEveryVersionFailedWithItsReason() {
        Agent a = agent(new RefusingMode(
                "ipvs cannot be used here",
                new IptablesMode(
                        History.NODE,
                        new Applier(List.of(kernel), "ipvs unavailable: test", clock),
                        new Conntrack(
                                (argv, stdin, t) -> {
                                    throw new AssertionError("a host command in a unit test: " + argv);
                                },
                                true),
                        Duration.ofSeconds(30),
                        1_000)));
        a.start();
        assertThat(a.running()).isEqualTo(-1);
        assertThat(kernel.chainNames(Table.NAT)).isEmpty();
        assertThat(lastAck().status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(lastAck().error()).isEqualTo("ipvs cannot be used here");
        assertThat(lastAck().mode()).isEqualTo("dry-run (ipvs unavailable: test)");
        a.tick();
        assertThat(acks).hasSize(1); // backing off
        clock.advance(Duration.ofSeconds(1));
        a.tick();
        assertThat(acks).hasSize(2).allSatisfy(k -> assertThat(k.status()).isEqualTo(NodeAck.Status.FAILED));
        assertThat(kernel.chainNames(Table.NAT)).isEmpty();
    }
}
