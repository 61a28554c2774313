package io.rulesync.api.deltas;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rulesync.api.rollout.Release;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.stream.ServerFrame;
import io.rulesync.store.VersionHistory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Agents' polls and watches of their cluster's next versions: {@link #request} answers at once when the cluster is past the
 * version the agent runs, and otherwise parks the request until {@link HeadWatch} sees the head move or the wait ends.
 *
 * <p>A version's delta is read back from PostgreSQL once ({@link VersionHistory#deltas}) and kept as the JSON the
 * compiler publishes, so a thousand agents woken by one version cost one read and no per-agent work beyond writing the
 * bytes. Waiting agents of a cluster usually run the same version; they are woken in groups by that version, and each
 * group's answer is made once.
 *
 * <p>Under a staged rollout a node is served versions only up to what is released to it ({@link Release}): a node of a
 * wave not yet open waits as if the version it runs were the newest, and is woken when its wave opens.
 */
public final class DeltaWaits implements HeadWatch.Listener {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(DeltaWaits.class);
    /** At most this many deltas in one answer; the agent asks again at once for the rest. */
    static final int MAX_DELTAS = 100;
    /** An agent further behind than this loads a snapshot instead: one snapshot costs less than this many deltas. */
    static final long MAX_BEHIND = 1_000;

    /** What a poll gets. */
    public sealed interface Answer {
        /**
         * Deltas in order from the version after the asked one up to {@code upTo}, as the response body: one JSON per
         * line, UTF-8; and as a node stream's frame ({@link #frame}). Made once per group of waiters, so a thousand
         * agents woken by one version share one body and one frame.
         */
        record Deltas(long head, long upTo, byte[] ndjson, Frames frames) implements Answer {
            Deltas(long head, long after, long upTo, String baseLineage, String lineage, byte[] ndjson) {
                this(head, upTo, ndjson, new Frames(head, after, upTo, baseLineage, lineage, ndjson));
            }

            /** The frame for a node stream ({@link ServerFrame#deltas}), its body deflated for a node that takes it. */
            public byte[] frame(boolean deflate) {
                return frames.get(deflate);
            }
        }

        /** The next delta is not stored any more (retention), or the agent is too far behind: it should load a snapshot. */
        record Snapshot(long head, String why) implements Answer {}

        /** The cluster has no version. */
        record UnknownCluster() implements Answer {}

        /** This replica is stopping: ask another (or again shortly). */
        record Stopping() implements Answer {}
    }

    /**
     * An answer's two frames, each made the first time a stream needs it: a REST watch needs neither, and a fleet whose
     * nodes all take deflate never makes the plain one.
     */
    static final class Frames {
        private final long head;
        private final long after;
        private final long upTo;
        private final String baseLineage;
        private final String lineage;
        private final byte[] ndjson;
        /** The plain frame, then the deflated one; null until made. */
        private final byte[][] made = new byte[2][];

        Frames(long head, long after, long upTo, String baseLineage, String lineage, byte[] ndjson) {
            this.head = head;
            this.after = after;
            this.upTo = upTo;
            this.baseLineage = baseLineage;
            this.lineage = lineage;
            this.ndjson = ndjson;
        }

        synchronized byte[] get(boolean deflate) {
            int i = deflate ? 1 : 0;
            if (made[i] == null) {
                made[i] = ServerFrame.deltas(head, after, upTo, baseLineage, lineage, ndjson, deflate);
            }
            return made[i];
        }
    }

    private record Key(String cluster, long seq) {}

    /** A delta as served, with the lineages it joins: a chain read back from memory is checked before it is served. */
    private record Held(String json, String baseLineage, String lineage) {}

    /** A parked request: the node (null: not named), the version it runs, and where its answer goes (once). */
    private record Waiter(String node, long after, Consumer<Answer> answer, Consumer<RuntimeException> failed) {}

    private record Group(long after, long upTo) {}

    private final VersionHistory versions;
    private final HeadWatch heads;
    private final Release release;
    private final Executor wakers;
    private final Cache<Key, Held> json;
    private final Map<String, Set<Waiter>> waiting = new ConcurrentHashMap<>();
    private final AtomicInteger parked = new AtomicInteger();
    private volatile boolean stopping;

    /**
     * @param wakers   where woken groups get their answers made (reading PostgreSQL): not the watch's thread
     * @param maxBytes how much delta JSON to keep in memory
     */
    public DeltaWaits(VersionHistory versions, HeadWatch heads, Executor wakers, long maxBytes, Release release) {
        this.versions = versions;
        this.heads = heads;
        this.release = release;
        this.wakers = wakers;
        this.json = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((Key k, Held v) -> 160 + 2 * v.json().length())
                .build();
    }

    /** Requests parked now: the agents connected to this replica and up to date. */
    public int parked() {
        return parked.get();
    }

    /**
     * Answers a poll from an agent that runs version {@code after} (null: the cluster's head, i.e. from now on):
     * {@code answer} gets the deltas now, or once the head moves; nothing when the caller's wait ends first (it then
     * answers "no news" itself and calls the returned {@link Runnable} to forget the request).
     */
    public Runnable request(
            String cluster, String node, Long after, Consumer<Answer> answer, Consumer<RuntimeException> failed) {
        return request(cluster, node, after, Lineage.UNKNOWN, answer, failed);
    }

    /**
     * {@link #request(String, String, Long, Consumer, Consumer)} from a node that says which {@link Lineage} the version
     * it runs has: a version of another history than the stored one (the database was restored from a backup since) is
     * answered with {@link Answer.Snapshot}.
     */
    public Runnable request(
            String cluster,
            String node,
            Long after,
            String lineage,
            Consumer<Answer> answer,
            Consumer<RuntimeException> failed) {
        Answer ready = now(cluster, node, after, lineage);
        if (ready != null) {
            answer.accept(ready);
            return () -> {};
        }
        long from = after == null ? released(cluster, node) : after;
        Waiter w = new Waiter(node, from, answer, failed);
        waiting.computeIfAbsent(cluster, c -> ConcurrentHashMap.newKeySet()).add(w);
        parked.incrementAndGet();
        Runnable forget = () -> {
            if (waiting.getOrDefault(cluster, Set.of()).remove(w)) {
                parked.decrementAndGet();
            }
        };
        // The head may have moved (or the node's wave opened) between reading it and parking: then nobody would wake
        // this one.
        if (released(cluster, node) > from) {
            advanced(cluster, head(cluster));
        }
        return forget;
    }

    /**
     * The answer to a poll from an agent that runs {@code after} (null: the head) if there is one now, else null (the
     * agent is at the head and would wait).
     */
    public Answer now(String cluster, String node, Long after) {
        return now(cluster, node, after, Lineage.UNKNOWN);
    }

    /** {@link #now(String, String, Long)} from a node that says which lineage its version has. */
    public Answer now(String cluster, String node, Long after, String lineage) {
        if (stopping) {
            return new Answer.Stopping();
        }
        long head = head(cluster);
        if (head == 0) {
            return new Answer.UnknownCluster();
        }
        if (after != null && !lineage.isEmpty()) {
            Answer other = otherHistory(cluster, after, lineage, head);
            if (other != null) {
                return other;
            }
        }
        long upTo = release.released(cluster, node, head);
        long from = after == null ? upTo : after;
        return upTo > from ? answer(cluster, from, upTo, head) : null;
    }

    /**
     * A snapshot when the version a node runs is not the stored one of that number: stored with another lineage, or not
     * stored and beyond the newest (versions the node ran were lost by a restore); else null. One row read per request.
     */
    private Answer otherHistory(String cluster, long after, String lineage, long head) {
        Optional<String> stored = versions.lineage(cluster, after);
        if (stored.isPresent() && !Lineage.agree(lineage, stored.get())) {
            return new Answer.Snapshot(
                    head,
                    "version " + after + " that this node runs is of lineage " + Lineage.shortForm(lineage)
                            + ", but the stored version " + after + " is of lineage " + Lineage.shortForm(stored.get())
                            + ": the database was restored from a backup (or lost commits) since; load a snapshot");
        }
        if (stored.isEmpty() && after > head && after > versions.head(cluster)) {
            return new Answer.Snapshot(
                    head,
                    "version " + after + " that this node runs is not stored (the newest is " + head
                            + "): the database was restored from a backup (or lost commits) since; load a snapshot");
        }
        return null;
    }

    /** The newest version served to {@code node} now. */
    public long released(String cluster, String node) {
        long head = head(cluster);
        return head == 0 ? 0 : release.released(cluster, node, head);
    }

    /**
     * Answers every parked request at once ({@link Answer.Stopping}) and parks no more: a stopping server waits for its
     * open requests, and a parked poll would hold its shutdown for the whole wait.
     */
    public void stop() {
        stopping = true;
        for (Set<Waiter> set : waiting.values()) {
            for (Waiter w : set) {
                if (set.remove(w)) {
                    parked.decrementAndGet();
                    w.answer().accept(new Answer.Stopping());
                }
            }
        }
    }

    @Override
    public void advanced(String cluster, long head) {
        Set<Waiter> set = waiting.get(cluster);
        if (set == null || set.isEmpty()) {
            return;
        }
        Map<Group, List<Waiter>> byVersion = new HashMap<>();
        for (Waiter w : set) {
            long upTo;
            try {
                upTo = release.released(cluster, w.node(), head);
            } catch (RuntimeException e) {
                // The cluster's rollout cannot be read now: this poll fails (its agent asks again), the others go on.
                if (set.remove(w)) {
                    parked.decrementAndGet();
                    deliver(() -> w.failed().accept(e));
                }
                continue;
            }
            if (w.after() < upTo && set.remove(w)) {
                parked.decrementAndGet();
                byVersion
                        .computeIfAbsent(new Group(w.after(), upTo), a -> new ArrayList<>())
                        .add(w);
            }
        }
        byVersion.forEach((g, group) -> wakers.execute(() -> {
            Answer a;
            try {
                a = answer(cluster, g.after(), g.upTo(), head);
            } catch (RuntimeException e) {
                log.warn(
                        "answering {} polls of cluster {} after version {}: {}",
                        group.size(),
                        cluster,
                        g.after(),
                        e.toString());
                group.forEach(w -> deliver(() -> w.failed().accept(e)));
                return;
            }
            group.forEach(w -> deliver(() -> w.answer().accept(a)));
        }));
    }

    /**
     * The head moved back: what is held of the cluster's deltas may be of the lost history, and the nodes parked on a
     * version beyond the new head run one that is gone; they are told to load a snapshot now, as nothing would wake them.
     */
    @Override
    public void rewound(String cluster, long head) {
        json.asMap().keySet().removeIf(k -> k.cluster().equals(cluster));
        Set<Waiter> set = waiting.get(cluster);
        if (set == null) {
            return;
        }
        for (Waiter w : set) {
            if (w.after() > head && set.remove(w)) {
                parked.decrementAndGet();
                Answer a = new Answer.Snapshot(
                        head,
                        "version " + w.after() + " that this node runs is not stored (the newest is " + head
                                + "): the database was restored from a backup (or lost commits) since; load a snapshot");
                wakers.execute(() -> deliver(() -> w.answer().accept(a)));
            }
        }
    }

    /** One waiter's answer; its failure (a request its client gave up on meanwhile) must not keep the others waiting. */
    private static void deliver(Runnable answer) {
        try {
            answer.run();
        } catch (RuntimeException e) {
            log.warn("answering a parked poll: {}", e.toString(), e);
        }
    }

    /** The cluster's newest version as this replica knows it; 0 for a cluster without versions. */
    long head(String cluster) {
        OptionalLong known = heads.ready() ? heads.head(cluster) : OptionalLong.empty();
        // A cluster the watch has not seen (new since its last read, or the watch is not reading): the store knows.
        return known.isPresent() ? known.getAsLong() : versions.head(cluster);
    }

    /**
     * The deltas after {@code after} up to {@code released} (at most {@link #MAX_DELTAS}), from memory or PostgreSQL;
     * {@code head} is the cluster's newest version.
     */
    Answer answer(String cluster, long after, long released, long head) {
        if (released - after > MAX_BEHIND) {
            return new Answer.Snapshot(
                    head,
                    "version " + after + " is " + (released - after) + " versions behind " + released + " (more than "
                            + MAX_BEHIND + "); load a snapshot");
        }
        Long halted = release.withheldBetween(cluster, after, released);
        if (halted != null) {
            return new Answer.Snapshot(
                    head,
                    "version " + halted + " was halted by the cluster's rollout and is not applied on the way"
                            + " to version " + released + "; load a snapshot");
        }
        long upTo = Math.min(released, after + MAX_DELTAS);
        List<Held> out = new ArrayList<>();
        for (long seq = after + 1; seq <= upTo; seq++) {
            Held j = json.getIfPresent(new Key(cluster, seq));
            if (j == null) {
                break;
            }
            out.add(j);
        }
        int held = out.size();
        if (after + out.size() < upTo) {
            read(cluster, after + out.size(), upTo, out);
        }
        // Only what came from memory may be of a history lost since; what was just read is the database's.
        if (held > 0 && !storedHistory(cluster, after, out)) {
            // Held since before a restore from a backup: what is in memory is not the database's history any more.
            log.info(
                    "cluster {}: the deltas held in memory after version {} are not those stored now (the database was restored "
                            + "from a backup?); reading them again",
                    cluster,
                    after);
            json.asMap().keySet().removeIf(k -> k.cluster().equals(cluster));
            out.clear();
            read(cluster, after, upTo, out);
        }
        if (out.isEmpty()) {
            return new Answer.Snapshot(
                    head,
                    "the delta to version " + (after + 1) + " is no longer stored (retention removed "
                            + "it); versions from " + versions.oldest(cluster) + " remain; load a snapshot");
        }
        StringBuilder body = new StringBuilder();
        out.forEach(j -> body.append(j.json()).append('\n'));
        return new Answer.Deltas(
                head,
                after,
                after + out.size(),
                out.get(0).baseLineage(),
                out.get(out.size() - 1).lineage(),
                body.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Reads the deltas after {@code after} up to {@code upTo} from PostgreSQL into {@code out}, and keeps them. */
    private void read(String cluster, long after, long upTo, List<Held> out) {
        for (RulesDelta d : versions.deltas(cluster, after, upTo)) {
            Held j = new Held(d.toJson(), d.baseLineage(), d.lineage());
            json.put(new Key(cluster, d.target()), j);
            out.add(j);
        }
    }

    /**
     * Whether {@code chain} (deltas in order) follows itself and ends at the lineage stored for its last version: as a
     * lineage hashes its parent's, the whole chain is then the stored history.
     */
    private boolean storedHistory(String cluster, long after, List<Held> chain) {
        for (int i = 1; i < chain.size(); i++) {
            if (!chain.get(i).baseLineage().equals(chain.get(i - 1).lineage())) {
                return false;
            }
        }
        String last = chain.get(chain.size() - 1).lineage();
        return versions.lineage(cluster, after + chain.size()).map(last::equals).orElse(false);
    }
}
