package io.rulesync.e2e.faults;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import io.rulesync.watcher.publish.EventSink;
import io.rulesync.watcher.publish.KafkaEventSink;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The fault harnesses' steady stream of changes to one cluster: its nodes and Services first, then endpoint moves of
 * random Services at RATE per second, through the watcher's transactional sink, retried until delivered (as the
 * watcher's publisher does, also while the broker is down). Remembers every payload delivered and the final state,
 * which is what the harness checks the pipeline against. The cluster is test-support's {@link SyntheticCluster}.
 */
final class ChangeStream {
    static final int NODES = 3;
    static final int ENDPOINTS = 3;

    private final String cluster;
    private final KafkaEventSink sink;
    private final int services;
    private final int rate;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<String> delivered = new ArrayList<>();
    private final Map<String, ClusterObject> state = new TreeMap<>();
    private final Random random = new Random(1);
    private final int[] generation;
    private final AtomicReference<Throwable> failed = new AtomicReference<>();
    private Thread thread;
    private long retried;

    ChangeStream(String cluster, String kafka, String topic, int services, int rate) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "faults");
        // While the broker is down, a send gives up after this long and is retried, rather than blocking for a minute.
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        this.cluster = cluster;
        this.sink = KafkaEventSink.create(p, topic);
        this.services = services;
        this.rate = rate;
        this.generation = new int[services];
    }

    /** Starts sending on a thread of its own. */
    void start() {
        thread = new Thread(this::run, "faults-stream");
        thread.setDaemon(true);
        thread.setUncaughtExceptionHandler((t, e) -> {
            failed.set(e);
            running.set(false);
        });
        thread.start();
    }

    private void run() {
        List<ClusterEvent> initial = new ArrayList<>();
        initial.add(new ClusterEvent.SettingsChanged(cluster, ClusterSettings.DEFAULT, Instant.now()));
        for (int n = 0; n < NODES; n++) {
            initial.add(upsert(SyntheticCluster.node(n)));
        }
        for (int i = 0; i < services; i++) {
            initial.add(upsert(SyntheticCluster.service(i)));
            initial.add(upsert(SyntheticCluster.slice(i, ENDPOINTS, 0)));
        }
        for (int from = 0; from < initial.size(); from += 100) {
            send(initial.subList(from, Math.min(initial.size(), from + 100)));
        }
        long next = System.nanoTime();
        while (running.get()) {
            int i = random.nextInt(services);
            send(List.of(upsert(SyntheticCluster.slice(i, ENDPOINTS, ++generation[i]))));
            next = Math.max(
                    next + 1_000_000_000L / rate, System.nanoTime() - 1_000_000_000L); // no burst after an outage
            long wait = next - System.nanoTime();
            if (wait > 0) {
                try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
        sink.close();
    }

    private ClusterEvent upsert(ClusterObject o) {
        return new ClusterEvent.ObjectUpserted(cluster, o, "1", Instant.now());
    }

    private void send(List<ClusterEvent> events) {
        while (true) {
            EventSink.Delivery d = sink.send(events);
            if (d.allDelivered()) {
                synchronized (this) {
                    for (ClusterEvent e : events) {
                        delivered.add(EventCodec.encode(e));
                        if (e instanceof ClusterEvent.ObjectUpserted u) {
                            state.put(ObjectRef.of(u.object()).toString(), u.object());
                        }
                    }
                }
                return;
            }
            if (!d.dropped().isEmpty()) {
                throw new IllegalStateException("the sink dropped events: " + d.error());
            }
            synchronized (this) {
                retried += d.failed().cardinality();
            }
            events = Arrays.stream(d.failed().stream().toArray())
                    .mapToObj(events::get)
                    .toList();
        }
    }

    /** Stops sending and waits for the last send to finish. */
    void stop() throws InterruptedException {
        running.set(false);
        if (thread != null) {
            thread.join();
        }
    }

    /** Why the stream stopped by itself; null while it runs (or was stopped). */
    Throwable failure() {
        return failed.get();
    }

    synchronized List<String> delivered() {
        return List.copyOf(delivered);
    }

    synchronized long retried() {
        return retried;
    }

    synchronized ClusterState finalState() {
        List<Service> svcs = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        for (ClusterObject o : state.values()) {
            if (o instanceof Service s) {
                svcs.add(s);
            } else if (o instanceof EndpointSlice s) {
                slices.add(s);
            } else {
                nodes.add((Node) o);
            }
        }
        return ClusterState.of(svcs, slices, nodes);
    }
}
