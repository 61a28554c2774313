package io.rulesync.compiler.bench;

import io.rulesync.compiler.runtime.CompilerApplication;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RuleFragment;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * The end-to-end harness behind BENCHMARKS.md for the pipeline: a real KRaft broker, the real
 * compiler service and the local PostgreSQL, one cluster of SERVICES Services x ENDPOINTS endpoints
 * x NODES nodes (every 10th Service a NodePort with externalTrafficPolicy Local, so node classes are
 * exercised). It measures the initial load, the sustained absorption rate, the event-to-committed-
 * version latency at a steady rate of endpoint changes, and the bytes a one-endpoint version stores.
 *
 * <p>{@code bench/pipeline [SERVICES ENDPOINTS NODES RATE SECONDS]}; needs PostgreSQL on
 * 127.0.0.1:5432 (a database of its own is created and dropped).
 */
public final class PipelineBenchmark {
    private static final String CLUSTER = "bench";
    private static final String TOPIC = "rulesync.cluster-events";
    private final EventClock clock = new EventClock();

    private PipelineBenchmark() {}

    public static void main(String[] args) throws Exception {
        int services = arg(args, 0, 10_000);
        int endpoints = arg(args, 1, 10);
        int nodes = arg(args, 2, 1_000);
        int rate = arg(args, 3, 100);
        int seconds = arg(args, 4, 30);
        new PipelineBenchmark().run(services, endpoints, nodes, rate, seconds);
        System.exit(0);
    }

    private void run(int services, int endpoints, int nodes, int rate, int seconds) throws Exception {
        String db = "rulesync_bench_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        admin("CREATE DATABASE " + db);
        EmbeddedKafkaKraftBroker kafka = new EmbeddedKafkaKraftBroker(1, 6, TOPIC);
        kafka.afterPropertiesSet();
        ConfigurableApplicationContext app = null;
        try {
            Map<String, Object> props = new HashMap<>();
            props.put("spring.datasource.url", "jdbc:postgresql://127.0.0.1:5432/" + db);
            props.put("spring.datasource.username", "postgres");
            props.put("spring.kafka.bootstrap-servers", kafka.getBrokersAsString());
            props.put("spring.main.banner-mode", "off");
            props.put("logging.level.root", "WARN");
            PartitionProcessor.VersionListener listener = clock;
            app = new SpringApplicationBuilder(CompilerApplication.class)
                    .web(WebApplicationType.NONE)
                    .properties(props)
                    .initializers(ctx -> ((org.springframework.context.support.GenericApplicationContext) ctx)
                            .registerBean(PartitionProcessor.VersionListener.class, () -> listener))
                    .run();
            CompilerStores store = app.getBean(CompilerStores.class);

            try (KafkaProducer<String, String> producer = producer(kafka.getBrokersAsString())) {
                // 1. Initial load.
                List<String> load = new ArrayList<>();
                load.add(EventCodec.encode(
                        new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Instant.now())));
                for (int n = 0; n < nodes; n++) {
                    load.add(up(node(n)));
                }
                for (int i = 0; i < services; i++) {
                    load.add(up(service(i)));
                    load.add(up(slice(i, endpoints, nodes, 0)));
                }
                long t0 = System.nanoTime();
                long last = send(producer, load);
                clock.awaitStored(last);
                double loadSeconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf(
                        "initial load: %d events (%d Services x %d endpoints, %d nodes) stored in %.1f s: %.0f events/s;"
                                + " head version %d%n",
                        load.size(),
                        services,
                        endpoints,
                        nodes,
                        loadSeconds,
                        load.size() / loadSeconds,
                        store.history().head(CLUSTER));

                // 2. Sustained absorption: endpoint changes as fast as the producer goes.
                int burst = Math.min(20_000, services * 2);
                List<String> changes = new ArrayList<>(burst);
                for (int k = 0; k < burst; k++) {
                    changes.add(up(slice(k % services, endpoints, nodes, 1 + k / services)));
                }
                t0 = System.nanoTime();
                last = send(producer, changes);
                clock.awaitStored(last);
                double burstSeconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf(
                        "sustained: %d endpoint-change events absorbed in %.1f s: %.0f events/s (head version %d)%n",
                        burst,
                        burstSeconds,
                        burst / burstSeconds,
                        store.history().head(CLUSTER));

                // 3. Latency at a steady rate: event sent -> version committed.
                List<Long> offsets = new ArrayList<>();
                int total = rate * seconds;
                long intervalNanos = 1_000_000_000L / rate;
                long start = System.nanoTime();
                long lastOffset = -1;
                for (int k = 0; k < total; k++) {
                    long due = start + k * intervalNanos;
                    // Sleep, not spin: on two cores a spinning sender would steal half the machine.
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(wait);
                    }
                    int svc = (k * 7919) % services;
                    lastOffset = send(producer, List.of(up(slice(svc, endpoints, nodes, 100 + k))));
                    offsets.add(lastOffset);
                }
                clock.awaitStored(lastOffset);
                long[] l =
                        offsets.stream().mapToLong(clock::storedAfter).sorted().toArray();
                System.out.printf(
                        "latency at %d endpoint changes/s for %d s (%d events): p50 %.1f ms, p90 %.1f ms, p99 %.1f ms,"
                                + " max %.1f ms%n",
                        rate, seconds, l.length, pct(l, 50), pct(l, 90), pct(l, 99), l[l.length - 1] / 1e6);

                // 4. Storage: a version made of exactly one endpoint change, against the full snapshot.
                clock.awaitStored(send(producer, List.of(up(slice(1, endpoints, nodes, 1_000_000)))));
                long head = store.history().head(CLUSTER);
                long oneChange = head;
                ClusterRules rules = store.history().rules(CLUSTER, head);
                long textBytes = 0;
                for (RuleFragment f : rules.fragments().values()) {
                    textBytes += f.text().length();
                }
                String node0 = rules.nodes().firstKey();
                long rendered = rules.ruleSet(node0, io.rulesync.model.cluster.IpFamily.IPV4)
                        .orElseThrow()
                        .render()
                        .length();
                System.out.printf(
                        "storage: a one-endpoint version (v%d) stored %d bytes; the full snapshot holds %d fragments,"
                                + " %d bytes of rule text (one node's rendered rules: %d bytes); database size %s%n",
                        oneChange,
                        oneChange < 0 ? -1 : store.history().storedBytes(CLUSTER, oneChange),
                        rules.fragments().size(),
                        textBytes,
                        rendered,
                        databaseSize(db));
            }
        } finally {
            if (app != null) {
                app.close();
            }
            kafka.destroy();
            admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
    }

    private long send(KafkaProducer<String, String> producer, List<String> values) throws Exception {
        return clock.send(producer, TOPIC, CLUSTER, values);
    }

    private static String up(io.rulesync.model.cluster.ClusterObject o) {
        return EventCodec.encode(new ClusterEvent.ObjectUpserted(CLUSTER, o, "1", Instant.now()));
    }

    /** Node n of the benchmark cluster (three zones). */
    public static Node node(int n) {
        return new Node(
                "node-" + n,
                "zone-" + (n % 3),
                List.of(new Node.NodeAddress(
                        "InternalIP", IpAddress.parse("192.168." + (n / 250) + "." + (1 + n % 250)))));
    }

    /** Service i: every 10th a NodePort with externalTrafficPolicy Local, every 7th with ClientIP affinity. */
    public static Service service(int i) {
        boolean local = i % 10 == 9;
        return new Service(
                new NamespacedName("ns" + (i % 50), "svc" + i),
                local ? ServiceType.NODE_PORT : ServiceType.CLUSTER_IP,
                List.of(IpAddress.parse("172.30." + (i / 250) + "." + (1 + i % 250))),
                List.of(new ServicePort("http", Protocol.TCP, 80, local ? 30000 + i % 2768 : 0)),
                List.of(),
                List.of(),
                List.of(),
                local ? TrafficPolicy.LOCAL : TrafficPolicy.CLUSTER,
                TrafficPolicy.CLUSTER,
                i % 7 == 6 ? 10800 : 0,
                0,
                false);
    }

    /** Service i's slice; {@code generation} moves its first endpoint to a new address. */
    public static EndpointSlice slice(int i, int endpoints, int nodes, int generation) {
        List<Endpoint> eps = new ArrayList<>(endpoints);
        for (int e = 0; e < endpoints; e++) {
            long n = (long) i * endpoints + e + (e == 0 ? (long) generation * 5_000_000 : 0);
            IpAddress ip = IpAddress.parse("10." + (64 + (n >> 16) % 128) + "." + ((n >> 8) & 255) + "." + (n & 255));
            eps.add(Endpoint.ready(ip, "node-" + ((i * endpoints + e) % nodes)));
        }
        return new EndpointSlice(
                new NamespacedName("ns" + (i % 50), "svc" + i + "-abcde"),
                "svc" + i,
                AddressType.IPV4,
                List.of(new EndpointPort("http", Protocol.TCP, 8080)),
                eps,
                false);
    }

    /** An idempotent producer that sends at once (linger 0). */
    public static KafkaProducer<String, String> producer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        return new KafkaProducer<>(p);
    }

    private static double pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)] / 1e6;
    }

    private static int arg(String[] args, int i, int def) {
        return args.length > i ? Integer.parseInt(args[i]) : def;
    }

    private static String databaseSize(String db) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + db, "postgres", "");
                Statement s = c.createStatement();
                var rs = s.executeQuery("SELECT pg_size_pretty(pg_database_size(current_database()))")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Runs SQL on the local server's postgres database (creating and dropping benchmark databases). */
    public static void admin(String sql) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
