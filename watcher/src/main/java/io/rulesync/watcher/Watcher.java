package io.rulesync.watcher;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.text.Printable;
import io.rulesync.model.topic.Topics;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.fleet.FleetException;
import io.rulesync.watcher.fleet.FleetFile;
import io.rulesync.watcher.kube.ClusterConnection;
import io.rulesync.watcher.kube.KubeClusterSource;
import io.rulesync.watcher.manifests.ManifestFolderSource;
import io.rulesync.watcher.publish.ClusterFeed;
import io.rulesync.watcher.publish.EventSink;
import io.rulesync.watcher.publish.KafkaEventSink;
import io.rulesync.watcher.publish.PendingEvents;
import io.rulesync.watcher.publish.Publisher;
import io.rulesync.watcher.resync.KafkaResyncRequests;
import io.rulesync.watcher.resync.ResyncSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running watcher: one source per cluster of the fleet (informers, or a polled manifest folder),
 * one {@link ClusterFeed} per cluster, one conflating {@link PendingEvents} queue, and one
 * {@link Publisher} thread sending to the sink. Embed it with
 * {@code try (Watcher w = Watcher.start(fleet, producerConfig, topic)) { ... }}.
 *
 * <p>Event order per cluster: {@code ListingStarted} and its {@code SettingsChanged} first, then upserts and deletes as
 * the source sees them, with a {@code SyncMarker} per kind after each (re)list or folder read. The compiler publishes no
 * first version of a cluster before the markers of every kind have come.
 *
 * <p>Anti-entropy, like an informer's resync period but cheap: every {@code digestInterval} each
 * cluster's feed publishes a {@code StateDigest} (a fingerprint of what it published), which the
 * compiler checks against what it folded. When they differ, or when the compiler cannot know that
 * it saw every event (its events log was replaced or lost records), it asks on the resync topic, and
 * the watcher publishes that cluster's whole state again. So a lost event heals within a bounded
 * time, and a resync costs a full republish only when something was actually missed.
 */
public final class Watcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Watcher.class);

    /** Default Kafka topic. */
    public static final String DEFAULT_TOPIC = "rulesync.cluster-events";

    /**
     * Tuning and seams.
     *
     * @param manifestPollInterval how often manifest folders are checked for changes
     * @param syncCheckInterval    how often informers are checked for a completed (re)list
     * @param fleetReloadInterval  how often the fleet file is checked for changed settings
     * @param drainTimeout         how long {@link #close()} keeps publishing what is still queued
     * @param publisher            batch size and retry pauses
     * @param clients              builds the fabric8 client of a cluster (default: {@link ClusterConnection#client})
     * @param digestInterval       how often each cluster's state digest is published; zero for never
     * @param resyncs              where the compiler's resync requests come from
     * @param manifestFileLimit    the largest manifest file read, in bytes (larger ones are refused unread)
     */
    public record Options(
            Duration manifestPollInterval,
            Duration syncCheckInterval,
            Duration fleetReloadInterval,
            Duration drainTimeout,
            Publisher.Options publisher,
            BiFunction<String, ClusterSource, KubernetesClient> clients,
            Duration digestInterval,
            ResyncSource resyncs,
            long manifestFileLimit) {
        public Options {
            if (manifestFileLimit < 1 || manifestFileLimit > ManifestReader.MAX_FILE_LIMIT) {
                throw new IllegalArgumentException("manifestFileLimit " + manifestFileLimit + " is out of range (1 to "
                        + ManifestReader.MAX_FILE_LIMIT + " bytes)");
            }
            Objects.requireNonNull(manifestPollInterval, "manifestPollInterval");
            Objects.requireNonNull(syncCheckInterval, "syncCheckInterval");
            Objects.requireNonNull(fleetReloadInterval, "fleetReloadInterval");
            Objects.requireNonNull(drainTimeout, "drainTimeout");
            Objects.requireNonNull(publisher, "publisher");
            Objects.requireNonNull(clients, "clients");
            Objects.requireNonNull(digestInterval, "digestInterval");
            Objects.requireNonNull(resyncs, "resyncs");
        }

        /** Default digest interval: a lost event heals within about this long. */
        public static final Duration DEFAULT_DIGEST_INTERVAL = Duration.ofMinutes(5);

        public static Options defaults() {
            return new Options(
                    Duration.ofMillis(200),
                    Duration.ofMillis(100),
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(10),
                    Publisher.DEFAULTS,
                    ClusterConnection::client,
                    DEFAULT_DIGEST_INTERVAL,
                    ResyncSource.NONE,
                    ManifestReader.DEFAULT_MAX_FILE_BYTES);
        }

        public Options withPublisher(Publisher.Options p) {
            return new Options(
                    manifestPollInterval,
                    syncCheckInterval,
                    fleetReloadInterval,
                    drainTimeout,
                    p,
                    clients,
                    digestInterval,
                    resyncs,
                    manifestFileLimit);
        }

        public Options withDigestInterval(Duration d) {
            return new Options(
                    manifestPollInterval,
                    syncCheckInterval,
                    fleetReloadInterval,
                    drainTimeout,
                    publisher,
                    clients,
                    d,
                    resyncs,
                    manifestFileLimit);
        }

        public Options withResyncs(ResyncSource r) {
            return new Options(
                    manifestPollInterval,
                    syncCheckInterval,
                    fleetReloadInterval,
                    drainTimeout,
                    publisher,
                    clients,
                    digestInterval,
                    r,
                    manifestFileLimit);
        }

        public Options withManifestFileLimit(long bytes) {
            return new Options(
                    manifestPollInterval,
                    syncCheckInterval,
                    fleetReloadInterval,
                    drainTimeout,
                    publisher,
                    clients,
                    digestInterval,
                    resyncs,
                    bytes);
        }
    }

    /**
     * Counters for logs and health checks.
     *
     * @param published      events delivered to the sink
     * @param pending        events not yet delivered (at most one per object, marker and settings, plus
     *                       the batch in flight)
     * @param rejected       reports of refused objects and files (each logged and published once per change)
     * @param suppressed     updates that changed nothing the model holds (e.g. Node heartbeats)
     * @param failedSends    sends that failed and were retried
     * @param kafkaAvailable false during an outage
     * @param recoveries     outages that ended (each followed by a republish of the current state)
     * @param dropped        events that could never be delivered: too large for the broker, or of a cluster that
     *                       another watcher took over (the sink's fence)
     */
    public record Stats(
            long published,
            int pending,
            long rejected,
            long suppressed,
            long failedSends,
            boolean kafkaAvailable,
            long recoveries,
            long dropped) {}

    private interface Source extends AutoCloseable {
        boolean synced();

        @Override
        void close();
    }

    private final FleetConfig fleet;
    private final Options options;
    private final PendingEvents pending = new PendingEvents();
    private final Map<String, ClusterFeed> feeds = new LinkedHashMap<>();
    private final List<Source> sources = new ArrayList<>();
    private final ScheduledExecutorService scheduler;
    private final Publisher publisher;
    private ResyncSource.Listening resyncs;
    private volatile FleetConfig current;
    private Object fleetFileStamp;
    private boolean closed;

    private Watcher(FleetConfig fleet, EventSink sink, Options options) {
        this.fleet = fleet;
        this.current = fleet;
        this.options = options;
        AtomicInteger n = new AtomicInteger();
        this.scheduler = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "rulesync-watcher-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        for (ClusterSpec c : fleet.clusters()) {
            ClusterFeed feed = new ClusterFeed(c.id(), pending::offer, Clock.systemUTC());
            feed.listingStarted();
            feed.settings(c.settings());
            feeds.put(c.id(), feed);
        }
        this.publisher = new Publisher(pending, sink, this::republish, options.publisher());
        sink.onRetaken(this::retaken);
    }

    /**
     * Starts watching {@code fleet} and publishing to Kafka topic {@code topic}, and hearing resync
     * requests on {@code topic}'s resync topic. {@code producerConfig} needs at least
     * {@code bootstrap.servers}; idempotence and {@code acks=all} are always on (see
     * {@link KafkaEventSink#producerConfig}).
     */
    public static Watcher start(FleetConfig fleet, Properties producerConfig, String topic) {
        return start(fleet, producerConfig, topic, Options.defaults());
    }

    /** {@link #start(FleetConfig, Properties, String)} with other options (the resync source is Kafka's). */
    public static Watcher start(FleetConfig fleet, Properties producerConfig, String topic, Options options) {
        return start(fleet, producerConfig, topic, options, KafkaEventSink.DEFAULT_RETAKE_AFTER);
    }

    /** As above; a cluster another watcher took is taken back after {@code retakeAfter} ({@link KafkaEventSink}). */
    public static Watcher start(
            FleetConfig fleet, Properties producerConfig, String topic, Options options, Duration retakeAfter) {
        return start(
                fleet,
                KafkaEventSink.create(producerConfig, topic, retakeAfter),
                options.withResyncs(new KafkaResyncRequests(producerConfig, Topics.resyncsOf(topic))));
    }

    /** Starts watching {@code fleet}, publishing to any sink. */
    public static Watcher start(FleetConfig fleet, EventSink sink, Options options) {
        Watcher w = new Watcher(fleet, sink, options);
        try {
            w.startAll();
        } catch (RuntimeException e) {
            w.close(Duration.ZERO);
            throw e;
        }
        return w;
    }

    private void startAll() {
        // Clients first: a cluster that cannot be configured stops the start before anything runs.
        Map<String, KubernetesClient> clients = new LinkedHashMap<>();
        try {
            for (ClusterSpec c : fleet.clusters()) {
                if (!(c.source() instanceof ClusterSource.ManifestFolder)) {
                    clients.put(c.id(), options.clients().apply(c.id(), c.source()));
                }
            }
        } catch (RuntimeException e) {
            clients.values().forEach(KubernetesClient::close);
            throw e;
        }
        publisher.start();
        // Before the sources: a request made after this is heard, one made before is answered by the first lists.
        resyncs = options.resyncs().start(this::resync);
        try {
            for (ClusterSpec c : fleet.clusters()) {
                sources.add(
                        c.source() instanceof ClusterSource.ManifestFolder m
                                ? folderSource(c, m)
                                : kubeSource(c, clients.remove(c.id())));
            }
        } catch (RuntimeException e) {
            clients.values().forEach(KubernetesClient::close);
            throw e;
        }
        if (!options.digestInterval().isZero()) {
            long ms = options.digestInterval().toMillis();
            scheduler.scheduleWithFixedDelay(this::digestAll, ms, ms, TimeUnit.MILLISECONDS);
        }
        fleet.file().ifPresent(f -> {
            fleetFileStamp = stamp(f);
            long ms = options.fleetReloadInterval().toMillis();
            scheduler.scheduleWithFixedDelay(() -> reloadSettings(f), ms, ms, TimeUnit.MILLISECONDS);
        });
    }

    private Source folderSource(ClusterSpec c, ClusterSource.ManifestFolder m) {
        // Its own threads: a slow folder holds up no other cluster, nor the digests and fleet reloads.
        ManifestFolderSource s = ManifestFolderSource.start(
                c.id(), m.folder(), feeds.get(c.id()), options.manifestPollInterval(), options.manifestFileLimit());
        log.info("cluster {}: watching manifest folder {}", c.id(), m.folder());
        return new Source() {
            @Override
            public boolean synced() {
                return s.reads() > 0;
            }

            @Override
            public void close() {
                s.close();
            }
        };
    }

    private Source kubeSource(ClusterSpec c, KubernetesClient client) {
        KubeClusterSource s;
        try {
            s = KubeClusterSource.start(c.id(), client, feeds.get(c.id()), scheduler, options.syncCheckInterval());
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        log.info("cluster {}: watching {}", c.id(), client.getMasterUrl());
        return new Source() {
            @Override
            public boolean synced() {
                return s.synced();
            }

            @Override
            public void close() {
                s.close();
            }
        };
    }

    /** The events delivered to the sink so far. */
    public long publishedEvents() {
        return publisher.published();
    }

    public Stats stats() {
        long rejected = 0;
        long suppressed = 0;
        for (ClusterFeed f : feeds.values()) {
            rejected += f.rejectedCount();
            suppressed += f.suppressedCount();
        }
        return new Stats(
                publisher.published(),
                pending.unpublished(),
                rejected,
                suppressed,
                publisher.failedSends(),
                publisher.available(),
                publisher.recoveries(),
                publisher.dropped());
    }

    /**
     * Registers the watcher's meters with {@code registry}: per cluster, the objects refused now
     * ({@code rulesync_watcher_refused_objects}) and the problem reports published
     * ({@code rulesync_watcher_problem_reports_total}: one per change of a source's problems, not per
     * read); and the events published, those not yet delivered, and whether Kafka is available.
     */
    public void bindMetrics(MeterRegistry registry) {
        for (ClusterFeed f : feeds.values()) {
            Gauge.builder("rulesync.watcher.refused.objects", f, ClusterFeed::refusedObjects)
                    .description("Objects (and unreadable manifest files) refused now, each named by a problem report")
                    .tag("cluster", f.cluster())
                    .register(registry);
            FunctionCounter.builder("rulesync.watcher.problem.reports", f, ClusterFeed::problemReports)
                    .description("Problem reports published: a source's problems found, changed or resolved")
                    .tag("cluster", f.cluster())
                    .register(registry);
        }
        FunctionCounter.builder("rulesync.watcher.events.published", publisher, Publisher::published)
                .description("Events delivered to Kafka")
                .register(registry);
        Gauge.builder("rulesync.watcher.events.pending", pending, PendingEvents::unpublished)
                .description("Events not yet delivered (at most one per object, marker, settings and problem source)")
                .register(registry);
        Gauge.builder("rulesync.watcher.kafka.available", publisher, p -> p.available() ? 1 : 0)
                .description("1 while Kafka takes events, 0 during an outage")
                .register(registry);
    }

    /** The per-cluster view (what has been published for each key), e.g. for a health endpoint. */
    public ClusterFeed feed(String cluster) {
        ClusterFeed f = feeds.get(cluster);
        if (f == null) {
            throw new IllegalArgumentException("no cluster '" + cluster + "' in the fleet");
        }
        return f;
    }

    /** Waits until every source has completed its first list or read. */
    public boolean awaitSynced(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!sources.stream().allMatch(Source::synced)) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Publishes new settings for one cluster (nothing if they are unchanged). */
    public void updateSettings(String cluster, ClusterSettings settings) {
        if (feed(cluster).settings(settings)) {
            log.info("cluster {}: settings changed", cluster);
        }
    }

    /** True once resync requests are heard (the resync topic may not exist until the compiler made it). */
    public boolean listeningForResyncs() {
        return resyncs != null && resyncs.ready();
    }

    private void digestAll() {
        for (ClusterFeed f : feeds.values()) {
            try {
                f.digest();
            } catch (RuntimeException e) {
                log.warn("cluster {}: publishing its state digest failed: {}", f.cluster(), e.toString());
            }
        }
    }

    /** The compiler asked: this cluster's whole state again, then a digest so that it can check the result. */
    private void resync(ResyncRequest r) {
        ClusterFeed f = feeds.get(r.cluster());
        if (f == null) {
            return; // another watcher's cluster
        }
        log.info(
                "cluster {}: the compiler asked for a resync ({}); publishing its whole state again",
                r.cluster(),
                Printable.escape(r.reason()));
        f.republish();
        f.digest();
    }

    /**
     * This watcher publishes {@code cluster} again after another watcher had taken it: nobody published what changed
     * meanwhile, so its whole state goes again, and a digest for the compiler to check. Runs on the publisher thread.
     */
    private void retaken(String cluster) {
        ClusterFeed f = feeds.get(cluster);
        if (f != null) {
            f.republish();
            f.digest();
        }
    }

    /** After a Kafka outage: every cluster's current state, again. Runs on the publisher thread. */
    private void republish() {
        for (ClusterFeed f : feeds.values()) {
            f.republish();
        }
    }

    private void reloadSettings(Path file) {
        Object stamp = stamp(file);
        if (Objects.equals(stamp, fleetFileStamp)) {
            return;
        }
        fleetFileStamp = stamp;
        FleetConfig next;
        try {
            next = FleetFile.load(file);
        } catch (FleetException e) {
            log.warn(
                    "fleet file {} changed but is invalid, keeping the current settings: {}",
                    file,
                    String.join(
                            "; ", e.problems().stream().map(Problem::toString).toList()));
            return;
        } catch (RuntimeException e) {
            log.warn("fleet file {} changed but cannot be read: {}", file, Printable.escape(e.toString()));
            return;
        }
        for (ClusterSpec c : next.clusters()) {
            ClusterFeed f = feeds.get(c.id());
            if (f == null) {
                log.warn("fleet file {}: cluster {} is new; restart the watcher to watch it", file, c.id());
                continue;
            }
            if (!current.cluster(c.id()).map(ClusterSpec::source).equals(java.util.Optional.of(c.source()))) {
                log.warn("fleet file {}: cluster {} has a new source; restart the watcher to use it", file, c.id());
            }
            updateSettings(c.id(), c.settings());
        }
        for (ClusterSpec c : current.clusters()) {
            if (next.cluster(c.id()).isEmpty()) {
                log.warn(
                        "fleet file {}: cluster {} was removed; it is still watched until the watcher restarts",
                        file,
                        c.id());
            }
        }
        current = next;
    }

    private static Object stamp(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return List.of(a.lastModifiedTime(), a.size(), String.valueOf(a.fileKey()));
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Stops the sources (informers closed), publishes what is still queued for up to the drain
     * timeout, then flushes and closes the sink.
     */
    @Override
    public void close() {
        close(options.drainTimeout());
    }

    private synchronized void close(Duration drainTimeout) {
        if (closed) {
            return;
        }
        closed = true;
        scheduler.shutdownNow();
        if (resyncs != null) {
            resyncs.close();
        }
        for (Source s : sources) {
            try {
                s.close();
            } catch (RuntimeException e) {
                log.warn("stopping a source failed", e);
            }
        }
        publisher.close(drainTimeout);
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log.info("watcher stopped; {} events published", publisher.published());
    }
}
