package io.rulesync.api.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.event.Json;
import io.rulesync.model.manifest.Problem;
import io.rulesync.store.Batch;
import io.rulesync.store.BatchStore;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.NotificationStore;
import io.rulesync.store.RolloutStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.TestDatabase;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Operators are told without watching: what the api and the compiler store (rollout steps, failed acks, problem
 * reports) becomes a notification in the same transaction, and each webhook receiver is sent each notification, in
 * order, signed, again after a failure, and once given up, recorded for the audit. A real PostgreSQL and a real HTTP
 * receiver on loopback.
 */
@RequiresPostgres
class WebhooksTest {
    private static final Instant T = Instant.parse("2026-12-04T10:00:00Z");
    private static final byte[] SECRET = "a shared secret of 32 bytes, ok!".getBytes(StandardCharsets.UTF_8);

    /** What a receiver got: its body and headers. */
    private record Received(String body, String signature, String delivery) {
        @SuppressWarnings("unchecked")
        Map<String, Object> json() {
            return Json.MAPPER.readValue(body, Map.class);
        }

        String kind() {
            return (String) json().get("kind");
        }
    }

    private TestDatabase db;
    private NotificationStore store;
    private HttpServer receiver;
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final AtomicInteger failNext = new AtomicInteger();
    private final MutableClock clock = new MutableClock(T);

    @BeforeEach
    void setUp() throws Exception {
        db = TestDatabase.create();
        store = new NotificationStore(db.dataSource());
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/hook", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            boolean fail = failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
            if (!fail) {
                received.add(new Received(
                        body,
                        ex.getRequestHeaders().getFirst(WebhookMessage.SIGNATURE),
                        ex.getRequestHeaders().getFirst(WebhookMessage.DELIVERY)));
            }
            byte[] answer = (fail ? "the receiver is down" : "ok").getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(fail ? 503 : 200, answer.length);
            ex.getResponseBody().write(answer);
            ex.close();
        });
        receiver.start();
    }

    @AfterEach
    void tearDown() {
        receiver.stop(0);
        db.close();
    }

    private String url() {
        return "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
    }

    private Webhooks webhooks() {
        Webhooks w = new Webhooks(store, List.of(url()), SECRET, clock, new SimpleMeterRegistry());
        w.start();
        w.close(); // rounds are driven by the test, not by the timer
        return w;
    }

    private void rolloutStep(String event, long version) {
        RolloutStore rollouts = new RolloutStore(db.dataSource());
        long revision = rollouts.rollout("shop").map(RolloutStore.Row::revision).orElse(-1L);
        rollouts.save(
                new RolloutStore.Row("shop", version, 1, 0, T, T, "rolling", null, revision + 1),
                revision,
                List.of(new RolloutStore.Entry(
                        0, "shop", version, clock.instant(), event, "canary", "rollout", event + " by the policy")));
    }

    private void failedAck(String node, long version) {
        new NodeStatusStore(db.dataSource())
                .recordAcks(List.of(new NodeAck(
                        "shop",
                        node,
                        version,
                        version - 1,
                        NodeAck.Status.FAILED,
                        "ipv4: iptables-restore exited 1",
                        7,
                        0,
                        "iptables",
                        clock.instant())));
    }

    private void problems(String source, Problem... problems) throws Exception {
        new BatchStore(db.dataSource())
                .commit(new Batch(
                        "g",
                        "events",
                        0,
                        -1,
                        1,
                        List.of(),
                        List.of(),
                        List.of(),
                        List.of(),
                        List.of(),
                        0,
                        List.of(new Batch.ProblemRow("shop", source, List.of(problems), clock.instant())),
                        List.of()));
    }

    @Test
    void whatIsStoredIsToldOnceEachInOrderAndSigned() throws Exception {
        Webhooks w = webhooks(); // registered before anything happened: told everything from here on
        rolloutStep("started", 2);
        rolloutStep("wave-opened", 2); // a step operators need not be told of
        failedAck("n1", 2);
        failedAck("n1", 2); // the same failure, acknowledged again
        problems(
                "shop/web.yaml",
                new Problem("shop/web.yaml (document 1)", "Service shop/web", "spec.ports[0].port", "must be 1-65535"),
                new Problem(
                        "shop/web.yaml (document 2)", "Service shop/db", "", "a second problem of the same report"));
        rolloutStep("halted", 2);
        rolloutStep("rollback-requested", 2);

        w.round();

        assertThat(received)
                .extracting(Received::kind)
                .containsExactly(
                        "rollout.started", "node.failed", "objects.refused", "rollout.halted", "rollout.rolled-back");
        assertThat(received.get(1).json())
                .containsEntry(
                        "text", "rulesync: shop version 2: node n1 failed to apply: ipv4: iptables-restore exited 1")
                .containsEntry("node", "n1");
        assertThat(received.get(2).json().get("detail"))
                .isEqualTo("shop/web.yaml: Service shop/web: spec.ports[0].port: must be 1-65535");
        assertThat(received.get(3).json().get("text"))
                .isEqualTo("rulesync: shop version 2: rollout halted: wave canary: halted by the policy");
        for (Received r : received) {
            long t = Long.parseLong(r.signature().substring(2, r.signature().indexOf(',')));
            assertThat(r.signature()).isEqualTo(WebhookMessage.signature(SECRET, t, r.body()));
            assertThat(r.delivery()).isEqualTo(String.valueOf(r.json().get("id")));
        }

        w.round();
        assertThat(received).as("nothing is told twice").hasSize(5);
    }

    @Test
    void aNewReceiverIsToldWhatHappensFromNowOnNotTheHistory() {
        rolloutStep("started", 1);
        Webhooks w = webhooks();
        rolloutStep("completed", 1);
        w.round();
        assertThat(received).extracting(Received::kind).containsExactly("rollout.completed");
    }

    @Test
    void aFailedDeliveryIsTriedAgainAfterItsBackoffWithTheRestWaitingBehindIt() {
        Webhooks w = webhooks();
        rolloutStep("started", 3);
        rolloutStep("completed", 3);
        failNext.set(2);

        w.round(); // the first attempt fails: nothing after it is sent
        assertThat(received).isEmpty();
        w.round(); // within the backoff: not tried
        assertThat(failNext.get()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(2));
        w.round(); // the second attempt fails too
        assertThat(received).isEmpty();
        clock.advance(Duration.ofSeconds(4));
        w.round();
        assertThat(received).extracting(Received::kind).containsExactly("rollout.started", "rollout.completed");
        assertThat(store.failures(null, 10)).isEmpty();
    }

    @Test
    void aDeliveryGivenUpIsRecordedForTheAuditAndTheNextGoes() {
        Webhooks w = webhooks();
        failedAck("n2", 4);
        rolloutStep("started", 5);
        failNext.set(Webhooks.ATTEMPTS);
        for (int i = 0; i < Webhooks.ATTEMPTS; i++) {
            w.round();
            clock.advance(Duration.ofSeconds(60));
        }
        assertThat(received).extracting(Received::kind).containsExactly("rollout.started");
        assertThat(store.failures("shop", 10)).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo("node.failed");
            assertThat(f.attempts()).isEqualTo(Webhooks.ATTEMPTS);
            assertThat(f.error()).isEqualTo("HTTP 503: the receiver is down");
            assertThat(f.destination())
                    .isEqualTo("http://127.0.0.1:" + receiver.getAddress().getPort() + "/…");
        });
    }

    @Test
    void twoReplicasSendingToOneReceiverTellEachNotificationOnce() throws Exception {
        Webhooks a = webhooks();
        Webhooks b = webhooks();
        for (int v = 1; v <= 40; v++) {
            failedAck("n" + v, v + 1);
        }
        ExecutorService two = Executors.newFixedThreadPool(2);
        try {
            // Each replica's timer, as fast as it can go, until everything has been told (or 30 s).
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            List<Future<?>> timers = new ArrayList<>();
            for (Webhooks replica : List.of(a, b)) {
                timers.add(two.submit(() -> {
                    while (received.size() < 40 && System.nanoTime() < deadline) {
                        replica.round();
                    }
                }));
            }
            for (Future<?> f : timers) {
                f.get();
            }
        } finally {
            two.shutdownNow();
        }
        List<String> ids = received.stream().map(Received::delivery).toList();
        assertThat(ids).hasSize(40).doesNotHaveDuplicates();
        List<Long> sorted = new ArrayList<>(ids.stream().map(Long::parseLong).toList());
        Collections.sort(sorted);
        assertThat(ids.stream().map(Long::parseLong).toList()).as("in order").isEqualTo(sorted);
    }

    @Test
    void aWebhookMustBeHttpsUnlessItIsOnLoopback() {
        assertThat(Webhooks.checked("https://hooks.example.com/services/T0/B0/secret"))
                .hasHost("hooks.example.com");
        assertThat(Webhooks.checked("http://127.0.0.1:9093/hook")).hasPort(9093);
        assertThatThrownBy(() -> Webhooks.checked("http://alerts.example.com/hook"))
                .hasMessage(
                        "webhook 'http://alerts.example.com/…' would send notifications in clear text: use https (plain http is taken for "
                                + "loopback addresses only)");
        assertThatThrownBy(() -> Webhooks.checked("ftp://files.example.com/x"))
                .hasMessageContaining("is not an http(s) URL");
    }

    @Test
    void theApiTellsItsReceiverOfANodesFailedAckAndItsAuditShowsWhatWasNotDelivered() throws Exception {
        StoredClusters.twoVersions(CompilerStores.on(db.dataSource()), "shop");
        Path secret = Files.writeString(
                Files.createTempFile("webhook-secret", ".txt"), new String(SECRET, StandardCharsets.UTF_8) + "\n");
        try (TestApi api = TestApi.on(
                db.url(),
                db.user(),
                db.password(),
                Map.of("rulesync.api.webhooks[0]", url(), "rulesync.api.webhook-secret-file", secret.toString()))) {
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
                    Instant.now());
            assertThat(api.post(
                                    "/api/v1/clusters/shop/nodes/n1/acks",
                                    "[" + failed.toJson() + "]",
                                    TestApi.SHOP_N1.token())
                            .statusCode())
                    .isEqualTo(204);
            Awaitility.await("the receiver is told")
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> !received.isEmpty());
            Received r = received.get(0);
            assertThat(r.json())
                    .containsEntry(
                            "text",
                            "rulesync: shop version 2: node n1 failed to apply: iptables-restore: line 4 failed");
            long t = Long.parseLong(r.signature().substring(2, r.signature().indexOf(',')));
            assertThat(r.signature()).isEqualTo(WebhookMessage.signature(SECRET, t, r.body()));

            // A delivery given up is in the audit, as operators read it.
            store.failed(
                    store.newest(1).get(0),
                    "https://hooks.example.com/…",
                    Webhooks.ATTEMPTS,
                    "HTTP 503: down",
                    Instant.now());
            Map<?, ?> audit = TestApi.json(api.get("/api/v1/audit?cluster=shop"));
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> undelivered = (List<Map<String, Object>>) audit.get("undelivered");
            assertThat(undelivered)
                    .singleElement()
                    .satisfies(u -> assertThat(u)
                            .containsEntry("kind", "node.failed")
                            .containsEntry("destination", "https://hooks.example.com/…")
                            .containsEntry("error", "HTTP 503: down")
                            .containsEntry("attempts", Webhooks.ATTEMPTS));
        } finally {
            Files.delete(secret);
        }
    }
}
