package io.rulesync.api.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.api.testing.TestNode;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.client.stream.NodeSync;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.model.stream.ServerFrame;
import io.rulesync.store.HistoryPruning;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Node streams against the real api and PostgreSQL, the node's side played by the client agents use: versions down as
 * they are stored, acks up on the same stream, who may speak for which node, and what a node that stops reading, a full
 * replica and a stopping one do.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class NodeStreamApiTest {
    private static final ApiTokens.Issued BANK = TestApi.BANK;

    private TestApi api;
    private ClusterHead.Step shop;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop", "bank");
        shop = StoredClusters.twoVersions(api.store(), "shop2");
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    /** A node's end of a stream on {@code on}; its channel is closed after the test. */
    private TestNode node(TestApi on, String cluster, String node, String token, int window) {
        return node(on, cluster, node, token, window, 0);
    }

    /** ... with an HTTP/2 flow-control window of {@code flowControlWindow} bytes (0: gRPC's). */
    private TestNode node(TestApi on, String cluster, String node, String token, int window, int flowControlWindow) {
        ManagedChannel ch = NodeStream.channel(on.streamTarget(), null, false, flowControlWindow);
        channels.add(ch);
        return new TestNode(ch, cluster, node, token, window);
    }

    private static List<RulesDelta> deltas(ServerFrame.Deltas d) {
        return d.text().lines().map(RulesDelta::fromJson).toList();
    }

    private static NodeAck applied(String cluster, String node, long version) {
        return new NodeAck(
                cluster, node, version, version, NodeAck.Status.APPLIED, null, 3, 12, "iptables", Instant.now());
    }

    @Test
    void versionsComeAsTheyAreStoredAndAcksRideBack() throws Exception {
        TestNode n1 = node(api, "shop2", "n1", api.nodeToken("shop2", "n1"), 4);
        n1.stream.send(new NodeFrame.Resume(1));
        ServerFrame.Deltas first = n1.deltas();
        assertThat(first.upTo()).isEqualTo(2);
        assertThat(deltas(first))
                .extracting(RulesDelta::base, RulesDelta::target)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1L, 2L));
        // The header names the lineages the frame joins, so a node can check it follows what it runs before parsing a
        // rule.
        assertThat(first.baseLineage())
                .isEqualTo(api.store().history().lineage("shop2", 1).orElseThrow())
                .hasSize(32);
        assertThat(first.lineage())
                .isEqualTo(api.store().history().lineage("shop2", 2).orElseThrow())
                .isNotEqualTo(first.baseLineage());
        // Applied to version 1 it gives version 2, as the REST watch's delta does.
        assertThat(deltas(first).get(0).diff().applyTo(api.store().history().rules("shop2", 1)))
                .isEqualTo(api.store().history().rules("shop2", 2));

        n1.stream.send(new NodeFrame.Acks(List.of(applied("shop2", "n1", 2))));
        NodeStatusStore statuses = new NodeStatusStore(api.database().dataSource());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.nodeStatus("shop2").stream().anyMatch(s -> s.running() == 2));

        // A new version is written to the open stream as it is stored: no request asks for it.
        shop = StoredClusters.next(api.store(), "shop2", shop, 7, "10.244.1.9");
        ServerFrame.Deltas next = n1.deltas();
        assertThat(next.upTo()).isEqualTo(3);
        assertThat(deltas(next)).extracting(RulesDelta::target).containsExactly(3L);
        n1.stream.send(new NodeFrame.Acks(List.of(applied("shop2", "n1", 3))));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> statuses.nodeStatus("shop2").stream()
                                .filter(s -> s.node().equals("n1"))
                                .map(NodeStatus::running)
                                .findFirst()
                                .orElse(0L)
                        == 3);
        assertThat(api.context()
                        .getBean(MeterRegistry.class)
                        .get("rulesync.streams.acks")
                        .counter()
                        .count())
                .isGreaterThanOrEqualTo(2);
    }

    /** Two nodes waiting on the same version get the same bytes: the frame is made once. */
    @Test
    void oneFrameIsMadeForEveryNodeWaitingOnTheVersion() throws Exception {
        TestNode a = node(api, "bank", "n1", api.nodeToken("bank", "n1"), 4);
        TestNode b = node(api, "bank", "n2", api.nodeToken("bank", "n2"), 4);
        a.stream.send(new NodeFrame.Resume(1));
        b.stream.send(new NodeFrame.Resume(1));
        ServerFrame.Deltas da = a.deltas();
        ServerFrame.Deltas db = b.deltas();
        assertThat(da.ndjson()).isEqualTo(db.ndjson());
    }

    /**
     * A node that takes deflate (every agent of this release says so) gets its frames' bodies deflated; one that names no
     * encoding, as an agent of an earlier release, gets them plain. Both read the same deltas.
     */
    @Test
    void framesAreDeflatedOnlyForNodesThatTakeIt() throws Exception {
        TestNode deflating = node(api, "bank", "n3", api.nodeToken("bank", "n3"), 4);
        ManagedChannel ch = NodeStream.channel(api.streamTarget(), null, false, 0);
        channels.add(ch);
        ClientInterceptor earlierRelease = new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(
                    MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<A> listener, Metadata headers) {
                        headers.removeAll(NodeSync.ACCEPT_ENCODING);
                        super.start(listener, headers);
                    }
                };
            }
        };
        TestNode plain = new TestNode(
                ch, ClientInterceptors.intercept(ch, earlierRelease), "bank", "n4", api.nodeToken("bank", "n4"), 4);
        deflating.stream.send(new NodeFrame.Resume(1));
        plain.stream.send(new NodeFrame.Resume(1));
        ServerFrame.Deltas d = deflating.deltas();
        ServerFrame.Deltas p = plain.deltas();
        assertThat(d.deflated()).isTrue();
        assertThat(p.deflated()).isFalse();
        assertThat(d.body().length).isLessThan(p.body().length);
        assertThat(d.ndjson()).isEqualTo(p.ndjson());
        assertThat(deltas(d)).extracting(RulesDelta::target).containsExactly(2L);
    }

    @Test
    void onlyAnAgentTokenAllowedTheClusterAndNodeMaySpeakForIt() throws Exception {
        assertThat(node(api, "shop", "n1", "rs_not-a-token", 1).end().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(node(api, "shop", "n1", null, 1).end().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        Status viewer = node(api, "shop", "n1", TestApi.VIEWER.token(), 1).end();
        assertThat(viewer.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(viewer.getDescription())
                .isEqualTo("token 'vera' has role viewer; the node stream is for agent tokens");
        Status otherCluster = node(api, "shop", "n1", BANK.token(), 1).end();
        assertThat(otherCluster.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(otherCluster.getDescription())
                .isEqualTo("token 'bank-agents' is bound to cluster 'bank'; it may not speak for cluster 'shop'");
        Status otherNode = node(api, "shop", "n2", TestApi.SHOP_N1.token(), 1).end();
        assertThat(otherNode.getDescription())
                .isEqualTo("token 'shop-n1' is bound to node 'n1' of cluster 'shop'; it may not speak for node 'n2'");
        // A credential of the cluster only, or of none, opens no stream: acks ride it, and they speak for the node.
        Status clusterOnly = node(api, "bank", "n1", BANK.token(), 1).end();
        assertThat(clusterOnly.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(clusterOnly.getDescription())
                .isEqualTo("token 'bank-agents' is not bound to a node: a node stream carries acks, "
                        + "which only node 'n1''s own credential may send");
        assertThat(node(api, "bank", "n1", TestApi.AGENT.token(), 1).end().getCode())
                .isEqualTo(Status.Code.PERMISSION_DENIED);
        Status badName = node(api, "shop", "N1!", TestApi.AGENT.token(), 1).end();
        assertThat(badName.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(badName.getDescription()).startsWith("rulesync-node: ");
    }

    /** A stream speaks for its node only: an ack for another node ends it, and nothing is stored. */
    @Test
    void anAckForAnotherNodeEndsTheStreamAndIsNotStored() throws Exception {
        TestNode n1 = node(api, "bank", "n1", api.nodeToken("bank", "n1"), 1);
        n1.stream.send(new NodeFrame.Acks(List.of(applied("bank", "n2", 2))));
        Status end = n1.end();
        assertThat(end.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(end.getDescription())
                .isEqualTo("acks[0]: the ack is for node 'n2' of cluster 'bank'; this stream speaks for node 'n1' of "
                        + "cluster 'bank'");
        TestNode garbage = node(api, "bank", "n1", api.nodeToken("bank", "n1"), 1);
        garbage.stream.send("{\"v\":1,\"type\":\"acks\",\"acks\":[{\"nonsense\":true}]}".getBytes());
        assertThat(garbage.end().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(new NodeStatusStore(api.database().dataSource()).nodeStatus("bank"))
                .noneMatch(s -> s.node().equals("n2"));
    }

    /** A node whose next delta retention removed is told to load a snapshot, on its stream. */
    @Test
    void aNodeWhoseNextDeltaIsGoneIsToldToLoadASnapshot() throws Exception {
        ClusterHead.Step step = StoredClusters.twoVersions(api.store(), "pruned");
        StoredClusters.next(api.store(), "pruned", step, 7, "10.244.1.9");
        new HistoryPruning(api.database().dataSource()).prune("pruned", 2, 0, 100, 100, Instant.now());
        TestNode n = node(api, "pruned", "n2", api.nodeToken("pruned", "n2"), 4);
        n.stream.send(new NodeFrame.Resume(1));
        Object o = n.next();
        assertThat(o).isInstanceOf(ServerFrame.Snapshot.class);
        assertThat(((ServerFrame.Snapshot) o).head()).isEqualTo(3);
        assertThat(((ServerFrame.Snapshot) o).why()).endsWith("load a snapshot");
        // After the snapshot the node says where it is, and versions come again.
        n.stream.send(new NodeFrame.Resume(2));
        assertThat(n.deltas().upTo()).isEqualTo(3);
    }

    /**
     * A node that stops reading holds nothing of the others: versions keep reaching a reading node, and the silent one's
     * stream is ended once its versions have waited past the limit (counted), from which it resumes when it comes back.
     */
    @Test
    void aNodeThatStopsReadingIsEndedAndHoldsNobodyBack() throws Exception {
        try (TestApi replica = TestApi.on(
                api.database().url(),
                api.database().user(),
                api.database().password(),
                Map.of("rulesync.api.max-fall-behind", "PT2S"))) {
            ClusterHead.Step step = StoredClusters.twoVersions(replica.store(), "slow");
            TestNode reader = node(replica, "slow", "n1", replica.nodeToken("slow", "n1"), 1000);
            // Asks for nothing, so never reads; the smallest HTTP/2 window (64 KiB), so the api's writes back up soon.
            TestNode stuck = node(replica, "slow", "n2", replica.nodeToken("slow", "n2"), 0, 65_535);
            reader.stream.send(new NodeFrame.Resume(1));
            stuck.stream.send(new NodeFrame.Resume(1));
            assertThat(reader.deltas().upTo()).isEqualTo(2);
            long offset = 7;
            for (int i = 0; i < 4; i++) {
                // Versions of a few hundred kB each: the silent node's window and the api's write buffer fill within
                // them.
                String[] ips = new String[600];
                for (int k = 0; k < ips.length; k++) {
                    ips[k] = "10.245." + (i * 4 + k / 250) + "." + (k % 250 + 1);
                }
                step = StoredClusters.next(replica.store(), "slow", step, offset++, ips);
                assertThat(reader.deltas().upTo()).isEqualTo(3 + i);
            }
            MeterRegistry meters = replica.context().getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(10))
                    .until(() ->
                            meters.get("rulesync.streams.fell.behind").counter().count() == 1);
            assertThat(replica.context().getBean(NodeStreams.class).open()).isEqualTo(1);
            // What the silent node hears once it reads again: what was in flight, then why its stream ended.
            stuck.stream.request(100);
            Object o;
            do {
                o = stuck.next();
            } while (!(o instanceof Status));
            Status ended = (Status) o;
            assertThat(ended.getCode()).as(ended.toString()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(ended.getDescription())
                    .isEqualTo("this node did not read its versions for 2 s; resume from the version it runs");
        }
    }

    @Test
    void aFullReplicaRefusesTheNextStreamAndAStoppingOneEndsItsOwn() throws Exception {
        TestApi replica = TestApi.on(
                api.database().url(),
                api.database().user(),
                api.database().password(),
                Map.of("rulesync.api.max-streams", 1));
        try {
            TestNode first = node(replica, "bank", "n1", replica.nodeToken("bank", "n1"), 4);
            first.stream.send(new NodeFrame.Resume(1));
            assertThat(first.deltas().upTo()).isEqualTo(2);
            Status refused = node(replica, "bank", "n2", replica.nodeToken("bank", "n2"), 4)
                    .end();
            assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(refused.getDescription()).startsWith("this api replica holds 1 node streams, its most");
            assertThat(replica.context()
                            .getBean(MeterRegistry.class)
                            .get("rulesync.streams.refused")
                            .counter()
                            .count())
                    .isEqualTo(1);
            replica.close();
            Status stopped = first.end();
            assertThat(stopped.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(Optional.ofNullable(stopped.getDescription()))
                    .hasValueSatisfying(d -> assertThat(d).contains("stopping"));
        } finally {
            replica.close();
        }
    }
}
