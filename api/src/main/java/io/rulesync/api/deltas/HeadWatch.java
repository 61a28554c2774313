package io.rulesync.api.deltas;

import io.rulesync.store.Notifications;
import io.rulesync.store.VersionHistory;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The head of every cluster as this api replica last read it, and who to tell when one moves. One thread reads all
 * heads (one small query) whenever PostgreSQL announces a new version ({@link Notifications}), and at least every
 * {@code every} in case an announcement was lost (the listening connection broke, or the api started after it).
 */
public final class HeadWatch implements AutoCloseable {
    /** Told when a cluster's head moved. Called on the watch's thread: hand long work on. */
    public interface Listener {
        /** The head moved forward. */
        void advanced(String cluster, long head);

        /** The head moved back: the database was restored from a backup (or lost commits). */
        void rewound(String cluster, long head);
    }

    private static final Logger log = LoggerFactory.getLogger(HeadWatch.class);

    private final VersionHistory versions;
    private final Notifications changes;
    private final Duration every;
    private final Map<String, Long> heads = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile Listener listener;
    private volatile boolean read;
    private volatile boolean stopping;

    public HeadWatch(VersionHistory versions, Notifications changes, Duration every) {
        this.versions = versions;
        this.changes = changes;
        this.every = every;
        this.thread = new Thread(this::run, "head-watch");
        thread.setDaemon(true);
    }

    public HeadWatch start(Listener l) {
        this.listener = l;
        thread.start();
        return this;
    }

    /** The cluster's head as last read; empty before the first read, or for a cluster not seen then. */
    public OptionalLong head(String cluster) {
        Long h = heads.get(cluster);
        return h == null ? OptionalLong.empty() : OptionalLong.of(h);
    }

    /** Whether the heads have been read at least once (until then callers ask the store). */
    public boolean ready() {
        return read;
    }

    private void run() {
        while (!stopping) {
            try {
                readHeads();
                changes.await(every);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.warn("reading the clusters' heads: {}", e.getMessage());
                read = false;
                try {
                    Thread.sleep(every.toMillis());
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    private void readHeads() {
        for (Map.Entry<String, Long> e : versions.heads().entrySet()) {
            Long before = heads.put(e.getKey(), e.getValue());
            if (before == null || before < e.getValue()) {
                listener.advanced(e.getKey(), e.getValue());
            } else if (before > e.getValue()) {
                log.warn(
                        "cluster {}: its newest version is {}, no longer {}: the database was restored from a backup (or lost "
                                + "commits); nodes that ran the versions after it load the restored history",
                        e.getKey(),
                        e.getValue(),
                        before);
                listener.rewound(e.getKey(), e.getValue());
            }
        }
        read = true;
    }

    @Override
    public void close() {
        stopping = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        changes.close();
    }
}
