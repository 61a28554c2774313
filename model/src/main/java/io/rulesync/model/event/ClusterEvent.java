package io.rulesync.model.event;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.text.Printable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A fact about one cluster, as the watcher saw it. Events carry whole object states (not patches), so
 * folding them is level-based: the latest event for a key says everything about that key.
 */
public sealed interface ClusterEvent {
    /** The cluster id from the fleet file: a DNS-1123 label. */
    String cluster();

    /** When the watcher saw the change. */
    Instant observedAt();

    /**
     * Which of the event types this is. Java 17 cannot switch over the sealed types themselves, so code that must
     * handle every type switches over this instead: a switch expression over it does not compile until a new type is
     * handled.
     */
    Type type();

    /** The event types, with the name each has on the wire and in the event log's {@code type} column. */
    enum Type {
        UPSERT("upsert"),
        DELETE("delete"),
        SYNC("sync"),
        LISTING("listing"),
        SETTINGS("settings"),
        DIGEST("digest"),
        PROBLEMS("problems"),
        PROBLEM_SYNC("problem-sync"),
        ROLLBACK("rollback"),
        RESUME("resume");

        private final String wireName;

        Type(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        public static java.util.Optional<Type> ofWireName(String name) {
            for (Type t : values()) {
                if (t.wireName.equals(name)) {
                    return java.util.Optional.of(t);
                }
            }
            return java.util.Optional.empty();
        }

        /** "upsert, delete, ... or resume", for messages. */
        public static String wireNames() {
            Type[] all = values();
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < all.length; i++) {
                b.append(i == 0 ? "" : i == all.length - 1 ? " or " : ", ").append(all[i].wireName);
            }
            return b.toString();
        }
    }

    static String requireCluster(String cluster) {
        String p = KubernetesNames.checkNamespace(cluster);
        if (p != null) {
            throw new IllegalArgumentException("cluster: " + p);
        }
        return cluster;
    }

    /** An object was created or changed; it is now exactly {@code object}. */
    record ObjectUpserted(String cluster, ClusterObject object, String resourceVersion, Instant observedAt)
            implements ClusterEvent {
        @Override
        public Type type() {
            return Type.UPSERT;
        }

        public ObjectUpserted {
            requireCluster(cluster);
            Objects.requireNonNull(object, "object");
            resourceVersion = resourceVersion == null ? "" : resourceVersion;
            Objects.requireNonNull(observedAt, "observedAt");
        }

        public ObjectRef ref() {
            return ObjectRef.of(object);
        }
    }

    /** An object is gone. */
    record ObjectDeleted(String cluster, ObjectRef ref, String resourceVersion, Instant observedAt)
            implements ClusterEvent {
        @Override
        public Type type() {
            return Type.DELETE;
        }

        public ObjectDeleted {
            requireCluster(cluster);
            Objects.requireNonNull(ref, "ref");
            resourceVersion = resourceVersion == null ? "" : resourceVersion;
            Objects.requireNonNull(observedAt, "observedAt");
        }
    }

    /**
     * After a (re)list of one kind: exactly these keys exist. Anything else of that kind was deleted
     * while the watcher was not looking.
     */
    record SyncMarker(String cluster, ObjectKind kind, Set<String> keys, Instant observedAt) implements ClusterEvent {
        @Override
        public Type type() {
            return Type.SYNC;
        }

        public SyncMarker {
            requireCluster(cluster);
            Objects.requireNonNull(kind, "kind");
            keys = Set.copyOf(new TreeSet<>(keys));
            for (String k : keys) {
                new ObjectRef(kind, k); // validates the key
            }
            Objects.requireNonNull(observedAt, "observedAt");
        }

        /** The keys in order (the set itself has none). */
        public List<String> sortedKeys() {
            return List.copyOf(new TreeSet<>(keys));
        }
    }

    /**
     * The watcher's fingerprint of everything it has published for this cluster so far: one per kind
     * whose first list completed, one of the settings (null when it has published none), and one of
     * the current problem reports ({@link ProblemsReported}: null from watchers that predate them, or
     * before the first {@link ProblemSync}). A consumer that folded every event before this one holds
     * exactly that state; one that does not has missed something, and asks for a resync. It changes
     * nothing by itself.
     */
    record StateDigest(
            String cluster,
            Map<ObjectKind, Fingerprint> objects,
            Fingerprint settings,
            Fingerprint problems,
            Instant observedAt)
            implements ClusterEvent {
        @Override
        public Type type() {
            return Type.DIGEST;
        }

        public StateDigest {
            requireCluster(cluster);
            objects = Map.copyOf(objects);
            Objects.requireNonNull(observedAt, "observedAt");
        }

        /** A digest that says nothing about problem reports. */
        public StateDigest(
                String cluster, Map<ObjectKind, Fingerprint> objects, Fingerprint settings, Instant observedAt) {
            this(cluster, objects, settings, null, observedAt);
        }

        /** The fingerprint of a set of problem reports (one per source; cleared ones are not held). */
        public static Fingerprint ofProblems(Collection<ProblemsReported> reports) {
            Fingerprint f = Fingerprint.EMPTY;
            for (ProblemsReported r : reports) {
                f = f.plus(Fingerprint.of(r));
            }
            return f;
        }

        /** The fingerprint of a collection of objects. */
        public static Fingerprint of(Collection<? extends ClusterObject> objects) {
            Fingerprint f = Fingerprint.EMPTY;
            for (ClusterObject o : objects) {
                f = f.plus(Fingerprint.of(o));
            }
            return f;
        }

        /**
         * How {@code state} and the {@code current} settings differ from what this digest describes, one phrase per
         * difference (empty when they agree), e.g. "Services: 12 here, 13 at the watcher".
         */
        public List<String> differences(ClusterState state, ClusterSettings current) {
            List<String> out = new ArrayList<>();
            Map<ObjectKind, Fingerprint> here = new EnumMap<>(ObjectKind.class);
            for (ObjectKind k : objects.keySet()) {
                here.put(
                        k,
                        of(
                                switch (k) {
                                    case SERVICE -> state.services();
                                    case ENDPOINT_SLICE -> state.endpointSlices();
                                    case NODE -> state.nodes();
                                }));
            }
            for (ObjectKind k : ObjectKind.values()) {
                Fingerprint theirs = objects.get(k);
                Fingerprint ours = here.get(k);
                if (theirs == null || theirs.equals(ours)) {
                    continue;
                }
                out.add(k.apiName() + "s: "
                        + (theirs.count() == ours.count()
                                ? ours.count() + " here and at the watcher, with different content"
                                : ours.count() + " here, " + theirs.count() + " at the watcher"));
            }
            if (settings != null && !settings.equals(Fingerprint.of(current))) {
                out.add("settings differ");
            }
            return out;
        }
    }

    /**
     * What is wrong with one <em>source</em> of the cluster's objects, as the watcher sees it now: a
     * manifest file (its path), or one object an informer saw ({@code Service shop/web}). Each problem
     * names the object and the field. An empty list says the source has no problems any more. A
     * watcher reports a source when its problems change, not at every read, so a file that stays
     * broken is reported once.
     *
     * <p>Problems are state, not facts about the cluster's objects: they never change the cluster's
     * view or make a version. Every text is printable (no control characters: see {@link Printable})
     * and bounded, so a report is safe to log and small on the wire; {@link #of} makes one so.
     */
    record ProblemsReported(String cluster, String source, List<Problem> problems, Instant observedAt)
            implements ClusterEvent {
        @Override
        public Type type() {
            return Type.PROBLEMS;
        }

        /** Most problems in one report; {@link #of} keeps the first ones and says how many more there were. */
        public static final int MAX_PROBLEMS = 100;
        /** Longest source, and longest part of a problem, in characters. */
        public static final int MAX_TEXT = 1000;

        public ProblemsReported {
            requireCluster(cluster);
            requireText("source", source);
            if (source.isEmpty()) {
                throw new IllegalArgumentException("source: must not be empty");
            }
            problems = List.copyOf(problems);
            if (problems.size() > MAX_PROBLEMS) {
                throw new IllegalArgumentException("problems: " + problems.size() + " are more than " + MAX_PROBLEMS);
            }
            for (int i = 0; i < problems.size(); i++) {
                Problem p = problems.get(i);
                requireText("problems[" + i + "].source", p.source());
                requireText("problems[" + i + "].object", p.object());
                requireText("problems[" + i + "].field", p.field());
                requireText("problems[" + i + "].message", p.message());
            }
            Objects.requireNonNull(observedAt, "observedAt");
        }

        /**
         * A report of {@code problems} as found: every text escaped and cut to {@link #MAX_TEXT}, and
         * beyond {@link #MAX_PROBLEMS} problems, the first ones and one more saying how many were left out.
         */
        public static ProblemsReported of(String cluster, String source, List<Problem> problems, Instant observedAt) {
            List<Problem> kept = new ArrayList<>(Math.min(problems.size(), MAX_PROBLEMS));
            for (Problem p : problems.size() > MAX_PROBLEMS ? problems.subList(0, MAX_PROBLEMS - 1) : problems) {
                kept.add(p.printable(MAX_TEXT));
            }
            String src = new Problem(source, "", "", "").printable(MAX_TEXT).source();
            if (problems.size() > MAX_PROBLEMS) {
                kept.add(new Problem(src, "", "", "and " + (problems.size() - kept.size()) + " more problems"));
            }
            return new ProblemsReported(cluster, src, kept, observedAt);
        }

        /** True when the source has no problems (any more). */
        public boolean cleared() {
            return problems.isEmpty();
        }

        /**
         * How many objects this report refuses: distinct objects named by its problems, a problem that
         * names none (a file that cannot be parsed) counting as one.
         */
        public int refusedObjects() {
            return (int) problems.stream().map(Problem::object).distinct().count();
        }

        private static void requireText(String what, String text) {
            Objects.requireNonNull(text, what);
            if (text.length() > MAX_TEXT) {
                throw new IllegalArgumentException(
                        what + ": " + text.length() + " characters are more than " + MAX_TEXT);
            }
            if (!Printable.isPrintable(text)) {
                throw new IllegalArgumentException(what + ": contains control characters");
            }
        }
    }

    /**
     * Exactly these sources of the cluster have problems now ({@link ProblemsReported}); a consumer
     * forgets the problems of every other source. Published once the watcher's first read of the
     * cluster is complete (it clears what an earlier watcher run reported about sources that were
     * fixed or removed while none ran) and with every republish.
     */
    record ProblemSync(String cluster, Set<String> sources, Instant observedAt) implements ClusterEvent {
        @Override
        public Type type() {
            return Type.PROBLEM_SYNC;
        }

        public ProblemSync {
            requireCluster(cluster);
            sources = Set.copyOf(new TreeSet<>(sources));
            for (String src : sources) {
                ProblemsReported.requireText("sources", src);
            }
            Objects.requireNonNull(observedAt, "observedAt");
        }

        /** The sources in order (the set itself has none). */
        public List<String> sortedSources() {
            return List.copyOf(new TreeSet<>(sources));
        }
    }

    /**
     * A watcher begins its first full listing of the cluster: a {@link SyncMarker} of every kind will follow once each kind
     * is listed. Until then the cluster's state is partial, so a cluster without a version publishes none before the
     * markers have come (kube-proxy too programs nothing before its informers have synced). Published first, before the
     * settings, by every watcher run; a cluster that already has versions is not held by it.
     */
    record ListingStarted(String cluster, Instant observedAt) implements ClusterEvent {
        @Override
        public Type type() {
            return Type.LISTING;
        }

        public ListingStarted {
            requireCluster(cluster);
            Objects.requireNonNull(observedAt, "observedAt");
        }
    }

    /** The cluster's proxy settings, published when a watcher starts and whenever they change. */
    record SettingsChanged(String cluster, ClusterSettings settings, Instant observedAt) implements ClusterEvent {
        @Override
        public Type type() {
            return Type.SETTINGS;
        }

        public SettingsChanged {
            requireCluster(cluster);
            Objects.requireNonNull(settings, "settings");
            Objects.requireNonNull(observedAt, "observedAt");
        }
    }

    /**
     * A request an operator made through the api (who, why), recorded there as {@code operator_action}
     * {@code actionId} and sent through the cluster's partition of the events topic, so the compiler
     * applies it in order with the watched changes and replays it like any other event.
     */
    sealed interface OperatorAction extends ClusterEvent {
        /** The api's id of the request: its row in {@code operator_action}. */
        long actionId();

        /** Who asked: the name of the api token that was used. */
        String actor();

        /** Why, in the operator's words. */
        String reason();

        /** Longest accepted reason, in characters. */
        int MAX_REASON = 1000;
        /** Longest accepted actor name, in characters. */
        int MAX_ACTOR = 128;

        /** Why {@code reason} is unusable, or null. */
        static String checkReason(String reason) {
            if (reason == null || reason.isBlank()) {
                return "must say why (a non-empty text)";
            }
            if (reason.length() > MAX_REASON) {
                return "is " + reason.length() + " characters long; at most " + MAX_REASON + " are kept";
            }
            return reason.chars().anyMatch(ch -> Character.isISOControl(ch) && ch != '\n' && ch != '\t')
                    ? "contains control characters"
                    : null;
        }

        /** Why {@code actor} is unusable, or null. */
        static String checkActor(String actor) {
            if (actor == null || actor.isBlank() || actor.length() > MAX_ACTOR) {
                return "must be 1 to " + MAX_ACTOR + " characters";
            }
            return actor.chars().anyMatch(Character::isISOControl) ? "contains control characters" : null;
        }

        private static void validate(String cluster, long actionId, String actor, String reason, Instant observedAt) {
            requireCluster(cluster);
            if (actionId < 1) {
                throw new IllegalArgumentException("actionId: " + actionId + " is not a positive number");
            }
            String p = checkActor(actor);
            if (p != null) {
                throw new IllegalArgumentException("actor: " + p);
            }
            p = checkReason(reason);
            if (p != null) {
                throw new IllegalArgumentException("reason: " + p);
            }
            Objects.requireNonNull(observedAt, "observedAt");
        }
    }

    /**
     * Publish the rules of {@code toVersion} as a new version and pin the cluster there: watched
     * changes are still folded and compiled, but not published until a {@link ResumeRequested}.
     */
    record RollbackRequested(
            String cluster, long actionId, long toVersion, String actor, String reason, Instant observedAt)
            implements OperatorAction {
        @Override
        public Type type() {
            return Type.ROLLBACK;
        }

        public RollbackRequested {
            OperatorAction.validate(cluster, actionId, actor, reason, observedAt);
            if (toVersion < 1) {
                throw new IllegalArgumentException(
                        "toVersion: " + toVersion + " is not a version (versions start at 1)");
            }
        }
    }

    /** Unpin the cluster: publish a version from the current state, and publish changes again from then on. */
    record ResumeRequested(String cluster, long actionId, String actor, String reason, Instant observedAt)
            implements OperatorAction {
        @Override
        public Type type() {
            return Type.RESUME;
        }

        public ResumeRequested {
            OperatorAction.validate(cluster, actionId, actor, reason, observedAt);
        }
    }
}
