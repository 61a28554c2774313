package io.rulesync.api.deltas;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.store.HistoryPruning;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What agents read and write through the api instead of Kafka: deltas by long poll, acks by POST; and that a token
 * bound to a cluster (or node) reaches nothing else.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class DeltasApiTest {
    private static final String AGENT = TestApi.AGENT.token();
    private TestApi api;
    private ClusterHead.Step head;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop", "bank");
        head = StoredClusters.twoVersions(api.store(), "retained");
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void aDeltaReadBackIsWhatTheCompilerStored() throws Exception {
        HttpResponse<String> r = api.get("/api/v1/clusters/shop/deltas?after=1&node=n1", AGENT);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/x-ndjson");
        assertThat(r.headers().firstValue(DeltasController.HEAD)).contains("2");
        List<RulesDelta> deltas = lines(r);
        assertThat(deltas).hasSize(1);
        assertThat(deltas.get(0).base()).isEqualTo(1);
        assertThat(deltas.get(0).target()).isEqualTo(2);
        // Applied to version 1, the delta gives version 2 exactly: the agent's own use of it.
        ClusterRules v1 = api.store().history().rules("shop", 1);
        ClusterRules v2 = api.store().history().rules("shop", 2);
        assertThat(deltas.get(0).diff().applyTo(v1)).isEqualTo(v2);
        assertThat(deltas.get(0).diff().fragments()).isNotEmpty();
    }

    /**
     * A node names the lineage of the version it runs. One of another history (the database was restored from a backup
     * since, and the number came again for other rules), or one beyond the newest stored, is told to load a snapshot
     * instead of being served what follows the stored version of that number.
     */
    @Test
    void aNodeOnAVersionOfAnotherHistoryIsToldToLoadASnapshot() throws Exception {
        String one = api.store().history().lineage("shop", 1).orElseThrow();
        String two = api.store().history().lineage("shop", 2).orElseThrow();
        HttpResponse<String> same = api.get("/api/v1/clusters/shop/deltas?after=1&lineage=" + one + "&node=n1", AGENT);
        assertThat(same.statusCode()).as(same.body()).isEqualTo(200);
        assertThat(lines(same))
                .extracting(RulesDelta::baseLineage, RulesDelta::lineage)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(one, two));

        String other = "0123456789abcdef".repeat(2);
        for (String watch : List.of("", "&watch=true")) {
            assertProblem(
                    api.get("/api/v1/clusters/shop/deltas?after=1&lineage=" + other + "&node=n1" + watch, AGENT),
                    410,
                    "after",
                    "version 1 that this node runs is of lineage 0123456789ab, but the stored version 1 is of lineage "
                            + one.substring(0, 12)
                            + ": the database was restored from a backup (or lost commits) since; load a snapshot");
            assertProblem(
                    api.get("/api/v1/clusters/shop/deltas?after=9&lineage=" + other + "&node=n1" + watch, AGENT),
                    410,
                    "after",
                    "version 9 that this node runs is not stored (the newest is 2)");
        }
        assertProblem(
                api.get("/api/v1/clusters/shop/deltas?after=1&lineage=ABC&node=n1", AGENT),
                400,
                "lineage",
                "lineage: 'ABC' is not a lineage (32 lowercase hex digits)");

        // A snapshot's entity tag names its lineage too: a node of the lost history is not told it runs the version.
        HttpResponse<String> snapshot = api.get("/api/v1/clusters/shop/versions/2/snapshot?node=n1", AGENT);
        assertThat(snapshot.headers().firstValue("ETag")).contains("\"v2-" + two + "\"");
        assertThat(snapshot.body()).contains("\"lineage\":\"" + two + "\"");
    }

    @Test
    void aPollWaitsForTheNextVersionAndGetsItWhenStored() throws Exception {
        CompletableFuture<HttpResponse<String>> poll =
                CompletableFuture.supplyAsync(() -> get("/api/v1/clusters/retained/deltas?after=2" + "&wait=30"));
        // Parked: nothing new yet. (Waited on, not timed: the check is that it has not answered.)
        Thread.sleep(500);
        assertThat(poll).isNotDone();
        StoredClusters.next(api.store(), "retained", head, 7, "10.244.1.7");
        HttpResponse<String> r = poll.get(20, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(lines(r)).extracting(RulesDelta::target).containsExactly(3L);
        assertThat(r.headers().firstValue(DeltasController.HEAD)).contains("3");
    }

    /** A fleet waits on one version: every parked poll is answered by the version, none by its wait running out. */
    @Test
    void aNewVersionWakesEveryParkedPoll() throws Exception {
        try (TestApi fleet = TestApi.onTwoVersions()) {
            ClusterHead.Step v2 = StoredClusters.twoVersions(fleet.store(), "fleet");
            int agents = 200;
            List<CompletableFuture<HttpResponse<String>>> polls =
                    parked(fleet, agents, "after=2&wait=60", i -> HttpResponse.BodyHandlers.ofString());
            DeltaWaits waits = fleet.context().getBean(DeltaWaits.class);
            StoredClusters.next(fleet.store(), "fleet", v2, 7, "10.244.1.8");
            for (CompletableFuture<HttpResponse<String>> poll : polls) {
                // Well before the polls' 60 s: answered by the version, not by the wait.
                HttpResponse<String> r = poll.get(20, TimeUnit.SECONDS);
                assertThat(lines(r)).extracting(RulesDelta::target).containsExactly(3L);
            }
            assertThat(waits.parked()).isZero();
        }
    }

    /**
     * A watch is one open answer: what is ready at once, then each version as it is stored, as lines of the same
     * response, until its wait is up; a connected agent costs a version one write, not a request.
     */
    @Test
    void aWatchStreamsEachNewVersionAsALineOfOneAnswer() throws Exception {
        ClusterHead.Step v2 = StoredClusters.twoVersions(api.store(), "watched");
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        HttpResponse<java.util.stream.Stream<String>> r = http.send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                api.baseUrl() + "/api/v1/clusters/watched/deltas?after=1&node=n1&watch=true&wait=4"))
                        .header("Authorization", "Bearer " + AGENT)
                        .build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/x-ndjson");
        assertThat(r.headers().firstValue(DeltasController.HEAD)).contains("2");
        java.util.concurrent.BlockingQueue<String> lines = new java.util.concurrent.LinkedBlockingQueue<>();
        CompletableFuture<Void> ended =
                CompletableFuture.runAsync(() -> r.body().forEach(lines::add));
        assertThat(RulesDelta.fromJson(lines.poll(10, TimeUnit.SECONDS)).target())
                .isEqualTo(2);
        ClusterHead.Step v3 = StoredClusters.next(api.store(), "watched", v2, 7, "10.244.1.7");
        assertThat(RulesDelta.fromJson(lines.poll(10, TimeUnit.SECONDS)).target())
                .isEqualTo(3);
        StoredClusters.next(api.store(), "watched", v3, 8, "10.244.1.8");
        RulesDelta d4 = RulesDelta.fromJson(lines.poll(10, TimeUnit.SECONDS));
        assertThat(d4.base()).isEqualTo(3);
        assertThat(d4.target()).isEqualTo(4);
        assertThat(ended).isNotDone();
        // The wait is up: the answer ends by itself, with nothing more, and nothing of it stays parked.
        ended.get(20, TimeUnit.SECONDS);
        assertThat(lines).isEmpty();
        await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> api.context().getBean(DeltaWaits.class).parked() == 0);
    }

    /** A fleet watching: one version reaches every open watch as a line, within the same answers, none of them ending. */
    @Test
    void aNewVersionIsWrittenToEveryOpenWatch() throws Exception {
        try (TestApi fleet = TestApi.onTwoVersions()) {
            ClusterHead.Step v2 = StoredClusters.twoVersions(fleet.store(), "fleet");
            int agents = 200;
            List<java.util.concurrent.BlockingQueue<String>> lines = new ArrayList<>();
            for (int i = 0; i < agents; i++) {
                lines.add(new java.util.concurrent.LinkedBlockingQueue<>());
            }
            // Each line as it comes, into that watch's queue; the answer's future completes only when the answer ends.
            List<CompletableFuture<HttpResponse<Void>>> answers = parked(
                    fleet,
                    agents,
                    "after=2&watch=true&wait=60",
                    i -> HttpResponse.BodyHandlers.fromLineSubscriber(new Lines(lines.get(i))));
            DeltaWaits waits = fleet.context().getBean(DeltaWaits.class);
            StoredClusters.next(fleet.store(), "fleet", v2, 7, "10.244.1.8");
            for (java.util.concurrent.BlockingQueue<String> mine : lines) {
                // Well before the watches' 60 s: written by the version, each answer still open.
                assertThat(RulesDelta.fromJson(mine.poll(20, TimeUnit.SECONDS)).target())
                        .isEqualTo(3);
            }
            assertThat(answers).noneMatch(CompletableFuture::isDone);
            // Parked again after the version written, waiting for the next.
            await().atMost(java.time.Duration.ofSeconds(10)).until(() -> waits.parked() == agents);
        }
    }

    /** What is wrong is known before a watch starts, and answered as for a poll; a watch of the head starts empty. */
    @Test
    void aWatchSaysWhatIsWrongBeforeItStreams() throws Exception {
        assertProblem(
                api.get("/api/v1/clusters/nowhere/deltas?after=1&watch=true", AGENT),
                404,
                "cluster",
                "cluster: 'nowhere' is not known");
        assertProblem(
                api.get("/api/v1/clusters/shop/deltas?after=1&watch=true&wait=61", AGENT), 400, "wait", "is not 0-60");
        assertProblem(
                api.get("/api/v1/clusters/shop/deltas?after=1&watch=yes", AGENT),
                400,
                "watch",
                "watch: 'yes' is not true or false");
        assertProblem(
                api.get("/api/v1/clusters/bank/deltas?after=1&node=n1&watch=true", TestApi.SHOP_N1.token()),
                403,
                null,
                "bound to cluster 'shop'");
        HttpResponse<String> atHead = api.get("/api/v1/clusters/bank/deltas?after=latest&watch=true&wait=1", AGENT);
        assertThat(atHead.statusCode()).isEqualTo(200);
        assertThat(atHead.headers().firstValue(DeltasController.HEAD)).contains("2");
        assertThat(atHead.body()).isEmpty();
        assertThat(lines(api.get("/api/v1/clusters/bank/deltas?after=1&watch=false&wait=0", AGENT)))
                .extracting(RulesDelta::target)
                .containsExactly(2L);
    }

    @Test
    void aPollWithNothingNewEndsEmptyAfterItsWait() throws Exception {
        HttpResponse<String> r = api.get("/api/v1/clusters/bank/deltas?after=2&wait=1", AGENT);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEmpty();
        HttpResponse<String> now = api.get("/api/v1/clusters/bank/deltas?after=2&wait=0", AGENT);
        assertThat(now.statusCode()).isEqualTo(200);
        assertThat(now.body()).isEmpty();
    }

    @Test
    void badPollsAreProblems() throws Exception {
        assertProblem(
                api.get("/api/v1/clusters/nowhere/deltas?after=1", AGENT),
                404,
                "cluster",
                "cluster: 'nowhere' is not known");
        assertProblem(api.get("/api/v1/clusters/shop/deltas", AGENT), 400, "after", "after:");
        assertProblem(api.get("/api/v1/clusters/shop/deltas?after=0", AGENT), 400, "after", "is not a version number");
        assertProblem(
                api.get("/api/v1/clusters/shop/deltas?after=1&wait=61", AGENT),
                400,
                "wait",
                "wait: '61' is not 0-60 (seconds)");
    }

    @Test
    void aDeltaRetentionRemovedSendsTheAgentToASnapshot() throws Exception {
        try (TestApi pruned = TestApi.onTwoVersions()) {
            StoredClusters.next(
                    pruned.store(), "shop", StoredClusters.twoVersions(pruned.store(), "shop"), 7, "10.244.1.9");
            new HistoryPruning(pruned.database().dataSource()).prune("shop", 2, 0, 100, 100, Instant.now());
            // Version 2 is the oldest now: its stored entries are all of its rules, not a change, so no delta leads to
            // it.
            assertProblem(
                    pruned.get("/api/v1/clusters/shop/deltas?after=1", AGENT),
                    410,
                    "after",
                    "the delta to version 2 is no longer stored (retention removed it); versions from 2 remain; load a snapshot");
            assertThat(lines(pruned.get("/api/v1/clusters/shop/deltas?after=2", AGENT)))
                    .extracting(RulesDelta::target)
                    .containsExactly(3L);
        }
    }

    /** A stopping api waits for its open requests: a parked poll is answered at once, or it would hold the stop for its wait. */
    @Test
    void aStoppingApiAnswersItsParkedPollsAtOnce() throws Exception {
        TestApi stopping = TestApi.onTwoVersions("shop");
        CompletableFuture<HttpResponse<String>> poll;
        CompletableFuture<HttpResponse<String>> watch;
        try {
            poll = CompletableFuture.supplyAsync(() -> {
                try {
                    return stopping.get("/api/v1/clusters/shop/deltas?after=2&wait=60", AGENT);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            watch = CompletableFuture.supplyAsync(() -> {
                try {
                    return stopping.get("/api/v1/clusters/shop/deltas?after=2&watch=true&wait=60", AGENT);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> stopping.context().getBean(DeltaWaits.class).parked() == 2);
        } finally {
            stopping.close();
        }
        assertProblem(poll.get(5, TimeUnit.SECONDS), 503, null, "this api replica is stopping; ask again");
        // A watch has said 200 already: it just ends, and the agent's next request hears why (or finds another
        // replica).
        HttpResponse<String> ended = watch.get(5, TimeUnit.SECONDS);
        assertThat(ended.statusCode()).isEqualTo(200);
        assertThat(ended.body()).isEmpty();
    }

    @Test
    void aTokenBoundToAClusterReadsNoOtherClustersDeltas() throws Exception {
        // TestApi's bound token: node n1 of shop.
        String n1 = TestApi.SHOP_N1.token();
        assertThat(api.get("/api/v1/clusters/shop/deltas?after=1&node=n1", n1).statusCode())
                .isEqualTo(200);
        assertProblem(
                api.get("/api/v1/clusters/bank/deltas?after=1&node=n1", n1),
                403,
                null,
                "token 'shop-n1' is bound to cluster 'shop'; it may not read cluster 'bank'");
        assertProblem(
                api.get("/api/v1/clusters/shop/deltas?after=1&node=n2", n1),
                403,
                null,
                "token 'shop-n1' is bound to node 'n1' of cluster 'shop'");
    }

    @Test
    void anAckIsStoredAndOnlyItsOwnNodeMaySendIt() throws Exception {
        NodeAck ack = new NodeAck("shop", "n1", 1, 1, NodeAck.Status.APPLIED, null, 12, 40, "iptables", Instant.now());
        String path = "/api/v1/clusters/shop/nodes/n1/acks";
        HttpResponse<String> r = api.post(path, "[" + ack.toJson() + "]", TestApi.SHOP_N1.token());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
        NodeStatus stored = new NodeStatusStore(api.database().dataSource())
                .nodeStatus("shop").stream()
                        .filter(s -> s.node().equals("n1"))
                        .findFirst()
                        .orElseThrow();
        assertThat(stored.running()).isEqualTo(1);
        assertThat(stored.ruleCount()).isEqualTo(40);
        // Acks that piled up go together, oldest first: the newest is what the node runs, and a failure among them is
        // kept.
        Instant t = Instant.now();
        NodeAck failed = new NodeAck(
                "shop",
                "n1",
                2,
                1,
                NodeAck.Status.FAILED,
                "iptables-restore: line 4 failed",
                5,
                0,
                "iptables",
                t.plusMillis(1));
        NodeAck retried =
                new NodeAck("shop", "n1", 2, 2, NodeAck.Status.APPLIED, null, 5, 41, "iptables", t.plusMillis(2));
        assertThat(api.post(path, "[" + failed.toJson() + "," + retried.toJson() + "]", TestApi.SHOP_N1.token())
                        .statusCode())
                .isEqualTo(204);
        NodeStatus after = new NodeStatusStore(api.database().dataSource())
                .nodeStatus("shop").stream()
                        .filter(s -> s.node().equals("n1"))
                        .findFirst()
                        .orElseThrow();
        assertThat(after.running()).isEqualTo(2);
        assertThat(after.lastError()).isEqualTo("iptables-restore: line 4 failed");
        assertThat(after.lastErrorVersion()).isEqualTo(2);

        NodeAck forN2 =
                new NodeAck("shop", "n2", 2, 2, NodeAck.Status.APPLIED, null, 12, 40, "iptables", Instant.now());
        assertProblem(
                api.post("/api/v1/clusters/shop/nodes/n2/acks", "[" + forN2.toJson() + "]", TestApi.SHOP_N1.token()),
                403,
                null,
                "token 'shop-n1' is bound to node 'n1' of cluster 'shop'; it may not acknowledge for node 'n2'");
        assertProblem(
                api.post("/api/v1/clusters/bank/nodes/n1/acks", "[" + ack.toJson() + "]", TestApi.SHOP_N1.token()),
                403,
                null,
                "bound to cluster 'shop'");
        // Only nodes acknowledge: an operator's word on what a node runs would be a forged ack.
        assertProblem(api.post(path, "[" + ack.toJson() + "]", TestApi.OPERATOR.token()), 403, null, "needs agent");
        assertProblem(api.post(path, "[" + ack.toJson() + "]", TestApi.VIEWER.token()), 403, null, "needs agent");
        // A credential bound to the cluster only, or to nothing, reads rules but speaks for no node.
        assertProblem(
                api.post("/api/v1/clusters/bank/nodes/n1/acks", "[" + ack.toJson() + "]", TestApi.BANK.token()),
                403,
                null,
                "token 'bank-agents' is not bound to a node: only node 'n1''s own credential may acknowledge for it");
        assertProblem(api.post(path, "[" + ack.toJson() + "]", AGENT), 403, null, "is not bound to a node");
        String n2 = api.nodeToken("shop", "n2");
        assertProblem(
                api.post("/api/v1/clusters/shop/nodes/n2/acks", "[" + forN2.toJson() + "," + ack.toJson() + "]", n2),
                400,
                "body",
                "body[1]: the ack is for node 'n1' of cluster 'shop', not the node and cluster of the path");
        String n1 = TestApi.SHOP_N1.token();
        assertProblem(api.post(path, "[{\"v\": 1}]", n1), 400, "body", "body[0]: ");
        assertProblem(api.post(path, ack.toJson(), n1), 400, "body", "body: expected a list of 1-1000 acks");
        assertProblem(api.post(path, "[", n1), 400, "body", "body: is not JSON");
        assertThat(new NodeStatusStore(api.database().dataSource()).nodeStatus("shop", List.of("n2")))
                .as("nothing stored for n2")
                .isEmpty();
        assertThat(new NodeStatusStore(api.database().dataSource()).nodeStatus("bank", List.of("n1")))
                .as("nothing stored for bank")
                .isEmpty();
    }

    @Test
    void acksArrivingTogetherAreWrittenInBatches() throws Exception {
        MeterRegistry meters = api.context().getBean(MeterRegistry.class);
        DistributionSummary batches = meters.get("rulesync.acks.batch").summary();
        long batchesBefore = batches.count();
        double acksBefore = batches.totalAmount();
        int nodes = 300;
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            NodeAck a = new NodeAck(
                    "bank", "node-" + i, 2, 2, NodeAck.Status.APPLIED, null, 1, 10, "hollow", Instant.now());
            sent.add(CompletableFuture.supplyAsync(
                    () -> post("/api/v1/clusters/bank/nodes/" + a.node() + "/acks", "[" + a.toJson() + "]")));
        }
        for (CompletableFuture<HttpResponse<String>> f : sent) {
            assertThat(f.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(204);
        }
        assertThat(new NodeStatusStore(api.database().dataSource()).nodeStatus("bank"))
                .hasSize(nodes);
        assertThat(batches.totalAmount() - acksBefore).isEqualTo(nodes);
        // Written as they came, but not one transaction each.
        assertThat(batches.count() - batchesBefore).isLessThan(nodes);
    }

    @Test
    void acksAreStoredWhileQueriesHoldEveryPooledConnection() throws Exception {
        // Take every connection of the pool the queries share, as a burst of large reads does.
        String starved = api.nodeToken("shop", "starved");
        DataSource shared = api.context().getBean(DataSource.class);
        List<Connection> held = new ArrayList<>();
        try {
            while (true) {
                try {
                    held.add(shared.getConnection());
                } catch (SQLException exhausted) {
                    break;
                }
            }
            assertThat(api.get("/api/v1/clusters/shop/nodes").statusCode())
                    .as("a query while the pool is taken")
                    .isEqualTo(503);
            NodeAck a =
                    new NodeAck("shop", "starved", 2, 2, NodeAck.Status.APPLIED, null, 1, 10, "hollow", Instant.now());
            HttpResponse<String> r =
                    api.post("/api/v1/clusters/shop/nodes/starved/acks", "[" + a.toJson() + "]", starved);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
        } finally {
            for (Connection c : held) {
                c.close();
            }
        }
        assertThat(new NodeStatusStore(api.database().dataSource()).nodeStatus("shop", List.of("starved")))
                .singleElement()
                .extracting(NodeStatus::running)
                .isEqualTo(2L);
    }

    /**
     * {@code agents} requests for the deltas of cluster "fleet" with {@code query}, sent at once; returns when every one
     * is parked in {@link DeltaWaits}.
     */
    private static <T> List<CompletableFuture<HttpResponse<T>>> parked(
            TestApi fleet,
            int agents,
            String query,
            java.util.function.IntFunction<HttpResponse.BodyHandler<T>> handler) {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        List<CompletableFuture<HttpResponse<T>>> answers = new ArrayList<>();
        for (int i = 0; i < agents; i++) {
            answers.add(http.sendAsync(
                    java.net.http.HttpRequest.newBuilder(
                                    java.net.URI.create(fleet.baseUrl() + "/api/v1/clusters/fleet/deltas?" + query))
                            .header("Authorization", "Bearer " + AGENT)
                            .build(),
                    handler.apply(i)));
        }
        DeltaWaits waits = fleet.context().getBean(DeltaWaits.class);
        await().atMost(java.time.Duration.ofSeconds(30)).until(() -> waits.parked() == agents);
        return answers;
    }

    /** A streamed answer's lines, into a queue as they arrive. */
    private record Lines(java.util.concurrent.BlockingQueue<String> into)
            implements java.util.concurrent.Flow.Subscriber<String> {
        @Override
        public void onSubscribe(java.util.concurrent.Flow.Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(String line) {
            into.add(line);
        }

        @Override
        public void onError(Throwable t) {
            // the test waits for lines, and fails on the ones that do not come
        }

        @Override
        public void onComplete() {}
    }

    private HttpResponse<String> get(String path) {
        try {
            return api.get(path, AGENT);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** POST with the credential of the node the path names. */
    private HttpResponse<String> post(String path, String json) {
        String[] parts = path.split("/"); // "", api, v1, clusters, C, nodes, N, acks
        try {
            return api.post(path, json, api.nodeToken(parts[4], parts[6]));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<RulesDelta> lines(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Arrays.stream(r.body().split("\n"))
                .filter(l -> !l.isBlank())
                .map(RulesDelta::fromJson)
                .toList();
    }
}
