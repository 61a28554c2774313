package io.rulesync.watcher.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import io.rulesync.model.text.Printable;
import io.rulesync.watcher.publish.ClusterFeed;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Kubernetes cluster: an informer per kind (Services and EndpointSlices in all namespaces, Nodes),
 * feeding a {@link ClusterFeed}.
 *
 * <h2>Handlers</h2>
 * The informer handlers run on fabric8's per-informer serial executor. They translate the object
 * ({@link ObjectTranslator}), hand it to the feed (which compares it with the last published state and
 * puts an event in the pending queue) and return; nothing in them waits for Kafka. An object the
 * decoder rejects is not published but reported (logged as one line naming cluster, object and fields,
 * and published as the problems of that object: {@link ClusterFeed#report}, once per change, so a
 * refused Node's heartbeats do not flood the log); if an earlier state of it was published, that state
 * stays (the same rule as a broken manifest file). Its problems are cleared when it becomes valid or is
 * deleted.
 *
 * <h2>When a list completes (sync markers)</h2>
 * fabric8 7.4 has no callback for "a list finished". What its source shows ({@code Reflector},
 * {@code ProcessorStore}):
 * <ul>
 *   <li>Every list, the initial one and each relist, runs {@code Reflector.listSyncAndWatch}: list,
 *       {@code store.retainAll} (which emits {@code onDelete(obj, true)} for keys that vanished), then
 *       a new watch; the reflector's {@code watching} flag, and so {@link SharedIndexInformer#isWatching()},
 *       becomes true only once that watch is established.</li>
 *   <li>A relist happens at start, after a 410 Gone from the watch, and after a failed list or a watch
 *       that ends with an error (via the exception handler, which here always retries). Before each one
 *       the watch is closed and {@code watching} is false, and fabric8 waits at least the watch
 *       reconnect interval (kept at &ge; 1 s by {@link ClusterConnection}) before listing again.</li>
 *   <li>{@code onNothing()} is called only for an empty list into an empty store, so it cannot mark
 *       every list; {@link SharedIndexInformer#hasSynced()} only tells that the first list is done.</li>
 * </ul>
 * So a check runs every {@code syncCheckInterval} (100 ms by default, far below the 1 s gap) and
 * treats a false&rarr;true edge of {@code isWatching()} after {@code hasSynced()} as "a list just
 * completed". The first edge is the initial list. An edge can also come from a watch that merely
 * reconnected without a relist (a dropped connection resumed from its resourceVersion); the marker
 * it causes is redundant but harmless, because markers are built from the feed (see below).
 *
 * <p>Ordering: after the initial list fabric8 starts the watch without waiting for the handlers to
 * see the listed objects (after a relist it does wait). So at the edge the check takes the keys in the
 * informer's store and waits until the handler has seen each of them (or it is gone from the store)
 * before publishing. The marker's keys are the feed's keys at that moment, i.e. exactly the objects
 * the stream has upserted and not deleted so far. A marker can therefore never drop an object that
 * the stream before it still has, and after a restart it drops exactly the objects deleted while no
 * watcher was running. (Within one process, relists need no marker to be correct: fabric8 itself
 * reports vanished keys through {@code onDelete(obj, true)}, which become deletes.)
 */
public final class KubeClusterSource implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KubeClusterSource.class);

    private final String cluster;
    private final KubernetesClient client;
    private final ClusterFeed feed;
    private final List<KindWatch<?>> watches;
    private final ScheduledFuture<?> check;

    private KubeClusterSource(
            String cluster,
            KubernetesClient client,
            ClusterFeed feed,
            ScheduledExecutorService scheduler,
            Duration syncCheckInterval) {
        this.cluster = cluster;
        this.client = client;
        this.feed = feed;
        this.watches = List.of(
                new KindWatch<>(
                        ObjectKind.SERVICE, client.services().inAnyNamespace().runnableInformer(0)),
                new KindWatch<>(
                        ObjectKind.ENDPOINT_SLICE,
                        client.discovery()
                                .v1()
                                .endpointSlices()
                                .inAnyNamespace()
                                .runnableInformer(0)),
                new KindWatch<>(ObjectKind.NODE, client.nodes().runnableInformer(0)));
        for (KindWatch<?> w : watches) {
            w.start();
        }
        long ms = syncCheckInterval.toMillis();
        this.check = scheduler.scheduleWithFixedDelay(this::checkSyncs, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts informers for {@code cluster} on {@code client} (which this source closes). Returns at
     * once; an unreachable API server is retried for as long as the source runs.
     */
    public static KubeClusterSource start(
            String cluster,
            KubernetesClient client,
            ClusterFeed feed,
            ScheduledExecutorService scheduler,
            Duration syncCheckInterval) {
        return new KubeClusterSource(cluster, client, feed, scheduler, syncCheckInterval);
    }

    /** True once every kind has completed its first list. */
    public boolean synced() {
        return watches.stream().allMatch(w -> w.initialDone);
    }

    private void checkSyncs() {
        for (KindWatch<?> w : watches) {
            try {
                w.checkSync();
            } catch (RuntimeException e) {
                // e.g. the informer is being stopped; never let the scheduled task die
                log.debug("cluster {}: sync check of {} failed", cluster, w.kind, e);
            }
        }
    }

    @Override
    public void close() {
        check.cancel(false);
        for (KindWatch<?> w : watches) {
            try {
                w.informer.close();
            } catch (RuntimeException e) {
                log.debug("cluster {}: stopping the {} informer failed", cluster, w.kind, e);
            }
        }
        client.close();
    }

    /** One kind's informer, its handler, and the state of its list-completion check. */
    private final class KindWatch<T extends HasMetadata> implements ResourceEventHandler<T> {
        final ObjectKind kind;
        final SharedIndexInformer<T> informer;
        /** Keys the handler has processed (accepted or rejected) and not seen deleted since. */
        final Set<String> seen = ConcurrentHashMap.newKeySet();
        // The fields below are written only by the (single-threaded) check.
        boolean wasWatching;
        volatile boolean initialDone; // also read by synced()
        Set<String> due;

        KindWatch(ObjectKind kind, SharedIndexInformer<T> informer) {
            this.kind = kind;
            this.informer = informer;
        }

        void start() {
            informer.exceptionHandler((started, t) -> {
                log.warn(
                        "cluster {}: listing/watching {}s failed, will retry: {}",
                        cluster,
                        kind.apiName(),
                        Printable.escape(String.valueOf(t.getMessage()).replaceAll("\\s+", " ")));
                return true;
            });
            informer.addEventHandler(this);
            informer.start();
        }

        @Override
        public void onAdd(T obj) {
            apply(obj);
        }

        @Override
        public void onUpdate(T oldObj, T newObj) {
            apply(newObj);
        }

        @Override
        public void onDelete(T obj, boolean deletedFinalStateUnknown) {
            String key = ObjectTranslator.key(obj);
            feed.delete(kind, key, obj.getMetadata().getResourceVersion());
            feed.report(source(key), source(key) + " is deleted", List.of());
            seen.remove(key);
        }

        private void apply(T obj) {
            String key = ObjectTranslator.key(obj);
            try {
                Decoded d = ObjectTranslator.decode(kind, obj);
                if (d instanceof Decoded.Accepted a) {
                    feed.upsert(a.object(), obj.getMetadata().getResourceVersion());
                    feed.report(source(key), source(key) + " is valid", List.of());
                } else if (d instanceof Decoded.Rejected r) {
                    boolean kept = feed.get(kind, key).isPresent();
                    feed.report(
                            source(key),
                            kept
                                    ? "invalid object not published (its last valid state stays)"
                                    : "invalid object not published",
                            r.problems());
                }
            } catch (RuntimeException e) {
                log.error("cluster {}: cannot translate {} {}", cluster, kind.apiName(), Printable.escape(key), e);
            } finally {
                seen.add(key);
            }
        }

        /** How this object's problems are reported: {@code Service shop/web}. */
        private String source(String key) {
            return kind.apiName() + " " + key;
        }

        void checkSync() {
            boolean watching = informer.isWatching();
            if (watching && !wasWatching && informer.hasSynced()) {
                due = new HashSet<>(informer.getStore().listKeys());
            }
            wasWatching = watching;
            if (due != null && handlerCaughtUp(due)) {
                due = null;
                feed.sync(kind);
                if (!initialDone) {
                    initialDone = true;
                    log.info(
                            "cluster {}: {}s synced ({} published)",
                            cluster,
                            kind.apiName(),
                            feed.keys(kind).size());
                } else {
                    log.debug("cluster {}: {}s relisted or rewatched", cluster, kind.apiName());
                }
            }
        }

        private boolean handlerCaughtUp(Set<String> keys) {
            for (String k : keys) {
                if (!seen.contains(k) && informer.getStore().getByKey(k) != null) {
                    return false;
                }
            }
            return true;
        }
    }
}
