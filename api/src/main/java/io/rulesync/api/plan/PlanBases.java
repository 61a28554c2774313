package io.rulesync.api.plan;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rulesync.compiler.checkpoint.Checkpoint;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.store.EventLog;
import io.rulesync.store.VersionHistory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state a plan starts from: each cluster's head folded from its stored events as the compiler folds them (its newest
 * checkpoint that reads back, then the events after it), taken at what it compiles ({@link ClusterHead#compiledAsPublished}).
 *
 * <p>A few clusters' bases are kept, so a plan after the first costs the events stored since, not a rebuild: a
 * 10,000-Service cluster takes seconds to fold and compile, and a pull request's check runs a plan each time. A kept base is
 * checked against the database before use: if the cluster's newest version went back, or the version it was taken at now
 * has another lineage, or the newest event is older than the base's (a restore from a backup), it is said in one line and
 * rebuilt.
 */
public final class PlanBases {
    private static final Logger log = LoggerFactory.getLogger(PlanBases.class);

    private final EventLog events;
    private final VersionHistory versions;
    private final Cache<String, Base> bases;

    /** A cluster's base: its head, the newest event folded into it, and the stored version it was last checked with. */
    private record Base(ClusterHead head, long lastEventId, long version, String lineage) {}

    /** What a plan starts from: the head, and the cluster's newest stored version when it was read. */
    public record Start(ClusterHead head, long version) {}

    /** The cluster's stored state is known to be incomplete: a plan from it would be wrong. */
    public static final class Incomplete extends RuntimeException {
        Incomplete(String message) {
            super(message);
        }
    }

    public PlanBases(EventLog events, VersionHistory versions, int kept, Duration idle) {
        this.events = events;
        this.versions = versions;
        this.bases =
                Caffeine.newBuilder().maximumSize(kept).expireAfterAccess(idle).build();
    }

    /**
     * The base of {@code cluster} now, or empty when it has no stored version. Plans of one cluster wait for each other's
     * catching up; a rebuild is done once for all of them.
     */
    public Optional<Start> start(String cluster) {
        long version = versions.head(cluster);
        if (version == 0) {
            bases.invalidate(cluster);
            return Optional.empty();
        }
        String lineage = versions.lineage(cluster, version).orElse(Lineage.UNKNOWN);
        Base b = bases.asMap().compute(cluster, (c, old) -> {
            String stale = old == null ? null : stale(c, old, version);
            if (stale != null) {
                log.warn(
                        "cluster {}: the plan base kept since event {} (version {}) no longer matches the database: {}; rebuilt",
                        c,
                        old.lastEventId(),
                        old.version(),
                        stale);
            }
            return old == null || stale != null ? load(c, version, lineage) : caughtUp(old, version, lineage);
        });
        return Optional.of(new Start(b.head(), version));
    }

    /** Why a kept base no longer stands for the stored history; null when it does. */
    private String stale(String cluster, Base b, long version) {
        if (version < b.version()) {
            return "its newest version went back from " + b.version() + " to " + version;
        }
        Optional<String> then = versions.lineage(cluster, b.version());
        if (then.isEmpty()) {
            return "version " + b.version()
                    + " is no longer stored"; // retention, or a restore: either way, start again
        }
        if (!then.get().equals(b.lineage())) {
            return "version " + b.version() + " has another lineage";
        }
        long newest = events.lastEventId(cluster);
        if (newest < b.lastEventId()) {
            return "its newest event is " + newest + ", older than " + b.lastEventId();
        }
        return null;
    }

    private Base caughtUp(Base b, long version, String lineage) {
        List<EventLog.Payload> stored = events.payloadsAfter(b.head().cluster(), b.lastEventId());
        if (stored.isEmpty()) {
            return new Base(b.head(), b.lastEventId(), version, lineage);
        }
        List<ClusterEvent> next = decode(b.head().cluster(), stored);
        // No history is given, so an operator action among them is refused here: a base is never pinned.
        ClusterHead head =
                next.isEmpty() ? b.head() : b.head().apply(next).next().compiledAsPublished();
        return new Base(head, stored.get(stored.size() - 1).id(), version, lineage);
    }

    private Base load(String cluster, long version, String lineage) {
        List<ClusterEvent> folded = new ArrayList<>();
        long after = 0;
        Optional<EventLog.StoredCheckpoint> stored = events.checkpoint(cluster);
        if (stored.isPresent() && Checkpoint.read(cluster, stored.get().text()) instanceof Checkpoint.Read.Usable u) {
            folded.addAll(u.events());
            after = stored.get().lastEventId();
        } else if (events.removedBefore(cluster) > 0) {
            throw new Incomplete("retention removed the events of cluster '" + cluster + "' before event "
                    + events.removedBefore(cluster)
                    + " and it has no checkpoint that reads back; its watcher's next full listing "
                    + "restores it");
        }
        List<EventLog.Payload> rest = events.payloadsAfter(cluster, after);
        folded.addAll(decode(cluster, rest));
        long last = rest.isEmpty() ? after : rest.get(rest.size() - 1).id();
        // Published rules are not read: the base compares with what it compiles, never with a stored version's rules.
        ClusterHead head = ClusterHead.rebuilt(cluster, folded, version, ClusterRules.EMPTY, null, lineage)
                .compiledAsPublished();
        return new Base(head, last, version, lineage);
    }

    /** Stored events as the compiler reads them: one this build refuses is left out, as the compiler leaves it out. */
    private static List<ClusterEvent> decode(String cluster, List<EventLog.Payload> stored) {
        List<ClusterEvent> out = new ArrayList<>(stored.size());
        int refused = 0;
        for (EventLog.Payload p : stored) {
            if (EventCodec.decode(p.json()) instanceof EventCodec.Decoded.Valid v) {
                out.add(v.event());
            } else {
                refused++;
            }
        }
        if (refused > 0) {
            log.warn(
                    "cluster {}: {} stored event(s) are refused by this build and left out of its plan base, as the compiler "
                            + "leaves them out",
                    cluster,
                    refused);
        }
        return out;
    }
}
