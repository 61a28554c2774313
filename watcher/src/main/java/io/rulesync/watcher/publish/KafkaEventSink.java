package io.rulesync.watcher.publish;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.EventParts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes events to one Kafka topic: key = cluster id (so one cluster's events stay in one
 * partition, in order), value = {@link EventCodec#encode} (UTF-8 JSON).
 *
 * <p><b>One writer per cluster.</b> Made by {@link #create}, the sink gives every cluster a
 * transactional producer of its own, {@code transactional.id = <prefix>.<cluster>} (prefix
 * {@value #DEFAULT_TRANSACTIONAL_ID_PREFIX}, or the {@code transactional.id} given), and sends each
 * cluster's part of a batch in one transaction. A second watcher of the same cluster (a rolling
 * update, a split brain) starting its producer fences this one: the broker refuses this instance's
 * next transaction, its events are dropped with one line that says so, and the compiler, which reads
 * committed records only, never folds a record of the older instance written after the newer one
 * began. Without the fence the two would interleave stale and fresh states of the same objects.
 *
 * <p>An event whose JSON is above {@link #MAX_MESSAGE_CHARS} (a sync marker of tens of thousands of
 * objects) goes as {@link EventParts}, in order, in the cluster's transaction, so the compiler gets all
 * of them or none.
 *
 * <p>The producers are idempotent with {@code acks=all}. After a failed batch a cluster's producer is
 * closed and the next batch gets a new one from the factory: a producer that timed out during an
 * outage starts over cleanly, and tests can point the factory at a broker that appears later.
 */
public final class KafkaEventSink implements EventSink {
    private static final Logger log = LoggerFactory.getLogger(KafkaEventSink.class);
    public static final String DEFAULT_TRANSACTIONAL_ID_PREFIX = "rulesync-watcher";
    /**
     * Larger events are sent as {@link EventParts}: below Kafka's default 1 MiB message limit with room for the
     * record's overhead (the compiler's deltas use the same bound).
     */
    public static final int MAX_MESSAGE_CHARS = 900_000;
    /** How long a commit that timed out is retried before its outcome is given up as unknown. */
    static final Duration COMMIT_RETRY = Duration.ofSeconds(60);
    /** The producer of every cluster when the sink is not transactional. */
    private static final String SHARED = "";

    private final Function<String, Producer<String, String>> factory;
    private final boolean transactional;
    private final String topic;
    private final Map<String, Producer<String, String>> producers = new HashMap<>();
    /** Clusters another watcher took, with when this one tries to take each back. */
    private final Map<String, Fence> fenced = new TreeMap<>();
    /** How long a cluster waits the next time it is fenced: doubled each time, so two live watchers soon alternate rarely. */
    private final Map<String, Duration> nextWait = new HashMap<>();

    private final Duration retakeAfter;
    private Consumer<String> retaken = cluster -> {};

    /** A cluster another watcher took: its events are dropped until {@code retryAtNanos}. */
    private record Fence(long retryAtNanos, Duration waiting) {}

    /** How long a fenced cluster waits, first, before this watcher takes it back. */
    public static final Duration DEFAULT_RETAKE_AFTER = Duration.ofMinutes(10);
    /** The longest wait, however often the cluster was fenced. */
    static final Duration MAX_RETAKE_AFTER = Duration.ofHours(2);

    /**
     * A sink of one shared, non-transactional producer: no fence between watchers (tests of outages, which
     * point the factory at a broker that is not there yet).
     */
    public KafkaEventSink(Supplier<Producer<String, String>> factory, String topic) {
        this(cluster -> factory.get(), false, topic);
    }

    /** A sink with {@code factory}'s producer per cluster; {@code transactional}: they have transactional ids. */
    public KafkaEventSink(Function<String, Producer<String, String>> factory, boolean transactional, String topic) {
        this(factory, transactional, topic, DEFAULT_RETAKE_AFTER);
    }

    /** As above; a fenced cluster is taken back after {@code retakeAfter} (then twice as long each time it is fenced again). */
    public KafkaEventSink(
            Function<String, Producer<String, String>> factory,
            boolean transactional,
            String topic,
            Duration retakeAfter) {
        this.factory = Objects.requireNonNull(factory, "factory");
        this.transactional = transactional;
        this.topic = Objects.requireNonNull(topic, "topic");
        if (retakeAfter.isNegative() || retakeAfter.isZero()) {
            throw new IllegalArgumentException("retakeAfter must be positive, not " + retakeAfter);
        }
        this.retakeAfter = retakeAfter;
    }

    /** A sink whose producers use {@code config} on top of {@link #producerDefaults()}, one transactional producer per cluster. */
    public static KafkaEventSink create(Properties config, String topic) {
        return create(config, topic, DEFAULT_RETAKE_AFTER);
    }

    /** As above, taking a fenced cluster back after {@code retakeAfter}. */
    public static KafkaEventSink create(Properties config, String topic, Duration retakeAfter) {
        Object servers = config.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (!(servers instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG + " is required");
        }
        Properties merged = producerConfig(config);
        String prefix = merged.getProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, DEFAULT_TRANSACTIONAL_ID_PREFIX);
        return new KafkaEventSink(
                cluster -> {
                    Properties p = new Properties();
                    p.putAll(merged);
                    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId(prefix, cluster));
                    p.put(
                            ProducerConfig.CLIENT_ID_CONFIG,
                            merged.getProperty(ProducerConfig.CLIENT_ID_CONFIG) + "-" + cluster);
                    return new KafkaProducer<>(p);
                },
                true,
                topic,
                retakeAfter);
    }

    /** The transactional id of a cluster's producer: every watcher of that cluster uses the same, which is the fence. */
    public static String transactionalId(String prefix, String cluster) {
        return prefix + "." + cluster;
    }

    /**
     * What the watcher needs from its producer. {@code acks=all} and idempotence are forced (see
     * {@link #producerConfig}); the timeouts are chosen so that an outage shows within seconds rather
     * than Kafka's default two minutes, while retries inside a timeout stay Kafka's business.
     */
    public static Properties producerDefaults() {
        Properties p = new Properties();
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "rulesync-watcher");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "2000");
        return p;
    }

    /** {@code overrides} on top of the defaults, with idempotence, {@code acks=all} and serializers forced. */
    public static Properties producerConfig(Properties overrides) {
        Properties p = producerDefaults();
        p.putAll(overrides);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    public String topic() {
        return topic;
    }

    /** Clusters whose events another watcher took over: this sink drops them until it takes them back. */
    public synchronized Set<String> fencedClusters() {
        return Set.copyOf(fenced.keySet());
    }

    /**
     * {@code listener} hears of each cluster this sink took back from another watcher, after the events that took it were
     * delivered (on the sending thread): whatever changed while this watcher was fenced was published by nobody, so the
     * watcher publishes the cluster's whole state again.
     */
    @Override
    public synchronized void onRetaken(Consumer<String> listener) {
        this.retaken = Objects.requireNonNull(listener, "listener");
    }

    @Override
    public synchronized Delivery send(List<ClusterEvent> events) {
        BitSet failed = new BitSet();
        BitSet dropped = new BitSet();
        Exception error = null;
        // Each cluster's events in their order; clusters are independent (other keys, other partitions).
        Map<String, List<Integer>> byCluster = new LinkedHashMap<>();
        for (int i = 0; i < events.size(); i++) {
            byCluster
                    .computeIfAbsent(transactional ? events.get(i).cluster() : SHARED, k -> new ArrayList<>())
                    .add(i);
        }
        for (Map.Entry<String, List<Integer>> e : byCluster.entrySet()) {
            Exception ex = sendPart(e.getKey(), e.getValue(), events, failed, dropped);
            error = error == null ? ex : error;
        }
        return new Delivery(failed, dropped, error);
    }

    /** Sends one cluster's events (positions {@code at} of the batch); returns the first failure, or null. */
    private Exception sendPart(String key, List<Integer> at, List<ClusterEvent> events, BitSet failed, BitSet dropped) {
        Fence fence = fenced.get(key);
        if (fence != null) {
            if (System.nanoTime() - fence.retryAtNanos() < 0) {
                at.forEach(dropped::set);
                return null;
            }
            // A new producer of the cluster's transactional id fences whichever watcher holds it now.
            log.warn(
                    "cluster {}: taking it back after {} fenced; a watcher that still publishes it is fenced in turn, and waits "
                            + "longer each time",
                    key,
                    fence.waiting());
        }
        Producer<String, String> producer;
        try {
            producer = producer(key);
        } catch (ProducerFencedException | InvalidProducerEpochException ex) {
            fence(key, at, dropped, ex);
            return null;
        } catch (RuntimeException ex) {
            at.forEach(failed::set);
            return ex;
        }
        List<Integer> todo = at;
        for (int attempt = 0; ; attempt++) {
            Attempt a = attempt(producer, todo, events);
            if (a.fenced() != null) {
                fence(key, todo, dropped, a.fenced());
                return null;
            }
            for (int i : a.tooLarge()) {
                log.error(
                        "dropping {} for cluster {}: {}",
                        describe(events.get(i)),
                        events.get(i).cluster(),
                        a.tooLargeError().getMessage());
                dropped.set(i);
            }
            if (a.failed().isEmpty()) {
                if (fence != null && fenced.remove(key) != null) {
                    log.warn("cluster {}: taken back; publishing its whole state again", key);
                    retaken.accept(key);
                }
                return a.tooLarge().isEmpty() ? null : a.tooLargeError();
            }
            if (transactional && !a.tooLarge().isEmpty() && attempt == 0) {
                // The record the broker can never take aborted the whole transaction: the others go again without it.
                todo = a.failed();
                continue;
            }
            a.failed().forEach(failed::set);
            closeProducer(key, Duration.ZERO);
            return a.error();
        }
    }

    /**
     * One try at sending the events at positions {@code at}, in one transaction when the sink is transactional.
     *
     * @param failed        positions not delivered that may be retried (in a transaction: all but the too large, when it
     *                      did not commit)
     * @param tooLarge      positions the broker can never take
     * @param tooLargeError why (the first of them)
     * @param error         the first failure, for the log
     * @param fenced        set when another instance took the cluster over
     */
    private record Attempt(
            List<Integer> failed, List<Integer> tooLarge, Exception tooLargeError, Exception error, Exception fenced) {
        static Attempt fencedBy(Exception e) {
            return new Attempt(List.of(), List.of(), null, e, e);
        }
    }

    /**
     * Commits the producer's transaction. A commit that timed out may have reached the broker (a broker restarting
     * answers late), and Kafka allows only one next step then: the same commit again. Aborting and sending the events in
     * a new transaction stored them twice when the first had committed after all (faults/outages found it). So a timed
     * out commit is retried for up to {@link #COMMIT_RETRY}; only a commit still unanswered after that is given up,
     * and its events are sent again, possibly twice (a repeated upsert changes nothing, but the log holds it twice).
     */
    private static void commit(Producer<String, String> producer) {
        long deadline = System.nanoTime() + COMMIT_RETRY.toNanos();
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    log.warn(
                            "a transaction's commit went unanswered for {} s; its events are sent again and may be stored twice",
                            COMMIT_RETRY.toSeconds());
                    throw e;
                }
                log.info(
                        "a transaction's commit timed out ({}); committing it again, as it may have reached the broker",
                        e.getMessage());
            }
        }
    }

    private Attempt attempt(Producer<String, String> producer, List<Integer> at, List<ClusterEvent> events) {
        // Per position, the futures of its message (or of its parts).
        List<List<Future<RecordMetadata>>> futures = new ArrayList<>(at.size());
        List<Integer> tooLarge = new ArrayList<>();
        Exception tooLargeError = null;
        Exception error = null;
        boolean committed = false;
        try {
            if (transactional) {
                producer.beginTransaction();
            }
            for (int i : at) {
                ClusterEvent e = events.get(i);
                List<String> messages;
                try {
                    messages = EventParts.split(e.cluster(), EventCodec.encode(e), e.observedAt(), MAX_MESSAGE_CHARS);
                } catch (IllegalArgumentException tooMany) {
                    tooLarge.add(i);
                    tooLargeError =
                            tooLargeError == null ? new RecordTooLargeException(tooMany.getMessage()) : tooLargeError;
                    futures.add(List.of());
                    continue;
                }
                List<Future<RecordMetadata>> sent = new ArrayList<>(messages.size());
                futures.add(sent);
                for (String m : messages) {
                    Future<RecordMetadata> f = producer.send(new ProducerRecord<>(topic, e.cluster(), m));
                    sent.add(f);
                    Exception now = f.isDone() ? failure(f) : null;
                    if (now != null && !(now instanceof RecordTooLargeException)) {
                        // Typically the metadata wait (max.block.ms) timed out: Kafka is not there, and every further
                        // send would wait just as long. Give up on the rest.
                        error = now;
                        break;
                    }
                }
                if (error != null) {
                    break;
                }
            }
            if (transactional && error == null) {
                commit(producer); // throws when a send failed: the transaction is then aborted below
                committed = true;
            }
        } catch (ProducerFencedException | InvalidProducerEpochException ex) {
            return Attempt.fencedBy(ex);
        } catch (RuntimeException ex) {
            error = ex;
        }
        if (transactional && !committed) {
            try {
                producer.abortTransaction(); // also completes the sends still pending, so the waits below end
            } catch (ProducerFencedException | InvalidProducerEpochException ex) {
                return Attempt.fencedBy(ex);
            } catch (RuntimeException ex) {
                log.debug("aborting a transaction failed", ex);
            }
        }
        List<Integer> failed = new ArrayList<>();
        for (int k = 0; k < at.size(); k++) {
            if (tooLarge.contains(at.get(k))) {
                continue;
            }
            Exception ex = null;
            for (Future<RecordMetadata> f : k < futures.size() ? futures.get(k) : List.<Future<RecordMetadata>>of()) {
                Exception one = failure(f);
                if (one != null && (ex == null || ex instanceof RecordTooLargeException)) {
                    ex = one; // the first failure, unless a later one says more than "too large"
                }
            }
            if (ex instanceof ProducerFencedException || ex instanceof InvalidProducerEpochException) {
                return Attempt.fencedBy(ex);
            }
            if (ex instanceof RecordTooLargeException) {
                tooLarge.add(at.get(k));
                tooLargeError = tooLargeError == null ? ex : tooLargeError;
            } else if (ex != null || k >= futures.size() || (transactional && !committed)) {
                failed.add(at.get(k));
                error = error == null ? ex : error;
            }
        }
        return new Attempt(failed, tooLarge, tooLargeError, error, null);
    }

    private Producer<String, String> producer(String key) {
        Producer<String, String> p = producers.get(key);
        if (p == null) {
            p = factory.apply(key);
            if (transactional) {
                try {
                    // Fences every older producer of this transactional id, and waits for its open transaction to end.
                    p.initTransactions();
                } catch (RuntimeException e) {
                    close(p, Duration.ZERO);
                    throw e;
                }
            }
            producers.put(key, p);
        }
        return p;
    }

    private void fence(String cluster, List<Integer> at, BitSet dropped, Exception ex) {
        Duration wait = nextWait.getOrDefault(cluster, retakeAfter);
        fenced.put(cluster, new Fence(System.nanoTime() + wait.toNanos(), wait));
        Duration doubled = wait.multipliedBy(2);
        nextWait.put(cluster, doubled.compareTo(MAX_RETAKE_AFTER) > 0 ? MAX_RETAKE_AFTER : doubled);
        at.forEach(dropped::set);
        closeProducer(cluster, Duration.ZERO);
        log.error(
                "cluster {}: another watcher now publishes its events ({}: {}); this one drops them, and takes the cluster back "
                        + "in {} (should that one have stopped). Two watchers of one cluster must not interleave: stop one of them",
                cluster,
                ex.getClass().getSimpleName(),
                ex.getMessage(),
                wait);
    }

    /** How a send ended (waiting for it if it has not). */
    private static Exception failure(Future<RecordMetadata> f) {
        try {
            f.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause() instanceof Exception c ? c : e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e;
        }
    }

    private static String describe(ClusterEvent e) {
        return e.getClass().getSimpleName();
    }

    private void closeProducer(String key, Duration timeout) {
        Producer<String, String> p = producers.remove(key);
        if (p != null) {
            close(p, timeout);
        }
    }

    private static void close(Producer<String, String> p, Duration timeout) {
        try {
            p.close(timeout);
        } catch (RuntimeException e) {
            log.debug("closing a Kafka producer failed", e);
        }
    }

    @Override
    public synchronized void close() {
        for (Producer<String, String> p : producers.values()) {
            try {
                p.flush();
            } catch (RuntimeException e) {
                log.debug("flushing a Kafka producer failed", e);
            }
            close(p, Duration.ofSeconds(5));
        }
        producers.clear();
    }
}
