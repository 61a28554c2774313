package io.rulesync.api.snapshot;

import io.rulesync.model.rules.ClusterRules;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * The last few versions read back from storage, by (cluster, version). Rebuilding a big cluster's
 * rules costs seconds, and agents tend to ask for the same version together (a new version, or a
 * fleet restart): concurrent requests for one version share a single rebuild, and later ones reuse
 * it. Versions never change once stored, so nothing here ever goes stale; only a version that was
 * not there yet is not remembered.
 */
public final class RecentVersions {
    /** One stored version, whole: its creation time and every node's rules. */
    public record StoredVersion(Instant createdAt, ClusterRules rules) {}

    /** By lineage too: after a restore from a backup, a number may come again for other rules. */
    private record Key(String cluster, long version, String lineage) {}

    private final Map<Key, CompletableFuture<Optional<StoredVersion>>> entries;

    /** @param capacity how many versions to keep; each is a whole cluster's rules (tens of MB at 10k Services) */
    public RecentVersions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " is not a positive number");
        }
        // Strict LRU, deliberately not Caffeine: with a handful of entries (4 by default) its
        // frequency-based admission keeps an old, often-read version over the newest one, which is
        // the version a fleet is about to ask for (keepsOnlyTheMostRecentlyUsed fails with it).
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, CompletableFuture<Optional<StoredVersion>>> eldest) {
                return size() > capacity;
            }
        };
    }

    /**
     * The version, from memory or from {@code load} (called by one caller at a time per version;
     * the others wait for its result). Empty when {@code load} says the version does not exist.
     */
    public Optional<StoredVersion> get(
            String cluster, long version, String lineage, Supplier<Optional<StoredVersion>> load) {
        Key key = new Key(cluster, version, lineage);
        CompletableFuture<Optional<StoredVersion>> future;
        boolean loader = false;
        synchronized (entries) {
            future = entries.get(key);
            if (future == null) {
                future = new CompletableFuture<>();
                entries.put(key, future);
                loader = true;
            }
        }
        if (loader) {
            try {
                Optional<StoredVersion> loaded = load.get();
                if (loaded.isEmpty()) {
                    forget(key, future); // it may be stored a moment later
                }
                future.complete(loaded);
            } catch (RuntimeException | Error e) {
                forget(key, future); // the next request tries again
                future.completeExceptionally(e);
                throw e;
            }
        }
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw e;
        }
    }

    /** How many versions are held (for tests and metrics). */
    public int size() {
        synchronized (entries) {
            return entries.size();
        }
    }

    private void forget(Key key, CompletableFuture<Optional<StoredVersion>> future) {
        synchronized (entries) {
            entries.remove(key, future);
        }
    }
}
