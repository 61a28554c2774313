package io.rulesync.watcher.publish;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ListingStarted;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.ProblemSync;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.text.Printable;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One cluster's event stream as its sources produce it: the last state published for every key, and
 * the rules that turn observations into events.
 *
 * <ul>
 *   <li>An upsert whose model object equals the last one published for its key publishes nothing
 *       (a Node heartbeat changes only status conditions, which the model does not hold).</li>
 *   <li>A delete of a key never published publishes nothing.</li>
 *   <li>A sync marker lists exactly the keys this feed holds for the kind at that point of the
 *       stream. So a marker always agrees with the events before it: for a consumer that saw the
 *       whole stream it changes nothing; for one that still holds keys from an earlier watcher run
 *       (deleted while no watcher was looking) it drops exactly those.</li>
 * </ul>
 *
 * <p>All methods are atomic, and the events go to the output (the pending queue) inside the same
 * lock, so the output's order is the order in which this view changed.
 *
 * <p>The feed keeps a {@link Fingerprint} of what it published per kind, up to date with every
 * event, so a {@link StateDigest} of a large cluster costs a few additions, not a hash of every
 * object.
 *
 * <p>Refused objects: the feed keeps the current problems of each <em>source</em> (a manifest file,
 * or an object an informer saw) and publishes a {@link ProblemsReported} only when a source's
 * problems change (an empty one when they are resolved), so a file that stays broken is logged and
 * reported once, not at every read. Once every kind has been listed it publishes a {@link ProblemSync}
 * naming the sources that have problems, so that a consumer forgets what an earlier watcher run
 * reported about sources fixed while none ran; a republish sends the reports and the sync again.
 */
public final class ClusterFeed {
    private static final Logger log = LoggerFactory.getLogger(ClusterFeed.class);

    private record Published(ClusterObject object, String resourceVersion, Fingerprint fingerprint) {}

    private final String cluster;
    private final Consumer<ClusterEvent> out;
    private final Clock clock;
    private final Map<ObjectKind, TreeMap<String, Published>> objects = new EnumMap<>(ObjectKind.class);
    private final Set<ObjectKind> synced = EnumSet.noneOf(ObjectKind.class);
    private final Map<ObjectKind, Fingerprint> fingerprints = new EnumMap<>(ObjectKind.class);
    private ClusterSettings settings;
    private long suppressed;
    /** The current problems of each source that has some, by the source's (printable) name. */
    private final TreeMap<String, ProblemsReported> problems = new TreeMap<>();
    /** Whether the first {@link ProblemSync} went out (after the first list of every kind). */
    private boolean problemsListed;

    private long reports;
    private long rejected;

    public ClusterFeed(String cluster, Consumer<ClusterEvent> out, Clock clock) {
        this.cluster = ClusterEvent.requireCluster(cluster);
        this.out = Objects.requireNonNull(out, "out");
        this.clock = Objects.requireNonNull(clock, "clock");
        for (ObjectKind k : ObjectKind.values()) {
            objects.put(k, new TreeMap<>());
            fingerprints.put(k, Fingerprint.EMPTY);
        }
    }

    public String cluster() {
        return cluster;
    }

    /**
     * Publishes that this feed's first listing of every kind begins ({@link ListingStarted}): a cluster the compiler has
     * no version of gets none until this listing's sync markers have come, so its first version is complete. Called once,
     * before anything else is published.
     */
    public synchronized void listingStarted() {
        out.accept(new ListingStarted(cluster, clock.instant()));
    }

    /** Publishes {@code object} unless it equals the last state published for its key. */
    public synchronized boolean upsert(ClusterObject object, String resourceVersion) {
        ObjectRef ref = ObjectRef.of(object);
        Published last = objects.get(ref.kind()).get(ref.key());
        if (last != null && last.object().equals(object)) {
            suppressed++;
            return false;
        }
        Published p = new Published(object, resourceVersion, Fingerprint.of(object));
        objects.get(ref.kind()).put(ref.key(), p);
        fingerprints.merge(
                ref.kind(),
                last == null ? p.fingerprint() : p.fingerprint().minus(last.fingerprint()),
                Fingerprint::plus);
        out.accept(new ObjectUpserted(cluster, object, resourceVersion, clock.instant()));
        return true;
    }

    /** Publishes a delete if {@code key} was published (and not deleted since). */
    public synchronized boolean delete(ObjectKind kind, String key, String resourceVersion) {
        Published gone = objects.get(kind).remove(key);
        if (gone == null) {
            return false;
        }
        fingerprints.merge(kind, gone.fingerprint(), Fingerprint::minus);
        out.accept(new ObjectDeleted(cluster, new ObjectRef(kind, key), resourceVersion, clock.instant()));
        return true;
    }

    /** Publishes a sync marker listing the keys of {@code kind} this feed holds now. */
    public synchronized SyncMarker sync(ObjectKind kind) {
        SyncMarker m = new SyncMarker(cluster, kind, objects.get(kind).keySet(), clock.instant());
        synced.add(kind);
        out.accept(m);
        if (!problemsListed && synced.size() == ObjectKind.values().length) {
            // Every source has been read once: what it reported is all there is.
            problemsListed = true;
            out.accept(new ProblemSync(cluster, problems.keySet(), clock.instant()));
        }
        return m;
    }

    /**
     * Publishes a {@link StateDigest} of what this feed has published: one fingerprint per kind whose
     * first list completed, and one of the settings. Nothing before the first list completed (the
     * digest would describe a state still being read); returns whether one was published.
     */
    public synchronized boolean digest() {
        if (synced.isEmpty()) {
            return false;
        }
        Map<ObjectKind, Fingerprint> kinds = new EnumMap<>(ObjectKind.class);
        for (ObjectKind k : synced) {
            kinds.put(k, fingerprints.get(k));
        }
        out.accept(new StateDigest(
                cluster,
                kinds,
                settings == null ? null : Fingerprint.of(settings),
                problemsListed ? StateDigest.ofProblems(problems.values()) : null,
                clock.instant()));
        return true;
    }

    /** Publishes the settings if they differ from the last ones published (or none were). */
    public synchronized boolean settings(ClusterSettings s) {
        Objects.requireNonNull(s, "settings");
        if (s.equals(settings)) {
            return false;
        }
        settings = s;
        out.accept(new SettingsChanged(cluster, s, clock.instant()));
        return true;
    }

    /**
     * Publishes the whole current state again: the settings, every object as an upsert, then a sync
     * marker for each kind that has been synced at least once, then every source's current problems
     * (as first reported) and, once every kind was listed, the {@link ProblemSync}. (A kind whose first
     * list has not completed gets no marker: an empty marker would make consumers drop every object of
     * that kind.)
     */
    public synchronized void republish() {
        if (settings != null) {
            out.accept(new SettingsChanged(cluster, settings, clock.instant()));
        }
        for (ObjectKind k : ObjectKind.values()) {
            for (Published p : objects.get(k).values()) {
                out.accept(new ObjectUpserted(cluster, p.object(), p.resourceVersion(), clock.instant()));
            }
        }
        for (ObjectKind k : ObjectKind.values()) {
            if (synced.contains(k)) {
                out.accept(new SyncMarker(cluster, k, objects.get(k).keySet(), clock.instant()));
            }
        }
        problems.values().forEach(out);
        if (problemsListed) {
            out.accept(new ProblemSync(cluster, problems.keySet(), clock.instant()));
        }
    }

    /**
     * The problems of one source now: a manifest file, or an object an informer saw; none when it is
     * fine. When they differ from the source's last report, they are logged (one line naming the
     * cluster, {@code what}, and each problem's object and field) and published; otherwise nothing
     * happens, so a source that stays broken is reported once. Returns whether a report was published.
     *
     * @param source names the source (escaped and cut as a report's source is: see {@link #sourceName})
     * @param what   how the log line names the source and what becomes of its objects, e.g.
     *               "file x.yaml is invalid, keeping the 2 objects last read from it"
     */
    public synchronized boolean report(String source, String what, List<Problem> found) {
        ProblemsReported r = ProblemsReported.of(cluster, source, found, clock.instant());
        ProblemsReported last = problems.get(r.source());
        if (last == null ? r.cleared() : last.problems().equals(r.problems())) {
            return false;
        }
        if (r.cleared()) {
            problems.remove(r.source());
            log.info("cluster {}: {}: no problems any more", cluster, r.source());
        } else {
            problems.put(r.source(), r);
            rejected++;
            log.warn(
                    "cluster {}: {}: {}",
                    cluster,
                    Printable.escape(what),
                    r.problems().stream().map(Problem::toString).collect(Collectors.joining("; ")));
        }
        reports++;
        out.accept(r);
        return true;
    }

    /** How a report names {@code source} (escaped and cut): the name {@link #reportedSources} lists. */
    public static String sourceName(String source) {
        return ProblemsReported.of("x", source, List.of(), Instant.EPOCH).source();
    }

    /** The sources that have problems now (by {@link #sourceName}). */
    public synchronized Set<String> reportedSources() {
        return new TreeSet<>(problems.keySet());
    }

    /** The current problems of each source that has some. */
    public synchronized List<ProblemsReported> currentProblems() {
        return List.copyOf(problems.values());
    }

    /** Objects (and unreadable files) refused now: distinct objects named by the current problems, per source. */
    public synchronized int refusedObjects() {
        return problems.values().stream()
                .mapToInt(ProblemsReported::refusedObjects)
                .sum();
    }

    /** Problem reports published so far: problems found, changed, or resolved. */
    public synchronized long problemReports() {
        return reports;
    }

    public synchronized Set<String> keys(ObjectKind kind) {
        return new TreeSet<>(objects.get(kind).keySet());
    }

    public synchronized Optional<ClusterObject> get(ObjectKind kind, String key) {
        return Optional.ofNullable(objects.get(kind).get(key)).map(Published::object);
    }

    public synchronized List<ClusterObject> objects(ObjectKind kind) {
        return new ArrayList<>(
                objects.get(kind).values().stream().map(Published::object).toList());
    }

    /** Upserts that published nothing because the object had not changed. */
    public synchronized long suppressedCount() {
        return suppressed;
    }

    /** Reports of problems published (see {@link #report}), resolutions not counted: each broken state is counted once. */
    public synchronized long rejectedCount() {
        return rejected;
    }
}
