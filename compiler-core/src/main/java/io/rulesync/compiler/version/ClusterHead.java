package io.rulesync.compiler.version;

import io.rulesync.compiler.admission.Admission;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.compiler.cluster.CompiledCluster;
import io.rulesync.compiler.fold.Changes;
import io.rulesync.compiler.fold.ClusterFold;
import io.rulesync.compiler.fold.ClusterView;
import io.rulesync.compiler.fold.ProblemReports;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ListingStarted;
import io.rulesync.model.event.ClusterEvent.OperatorAction;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * One cluster as the compiler holds it: the view folded from all its events so far, the rules
 * compiled from that view, the rules of its latest version, that version's number, and whether an
 * operator pinned it. Immutable: {@link #apply} returns the next head, which the caller adopts only
 * once the new version is stored.
 *
 * <p>A new version is due exactly when some node's rules (or the set of nodes) differ from the
 * latest version's, or when an operator action was carried out (a rollback or resume is always a
 * version of its own, even when the rules happen to be equal, so the history shows it). While the
 * cluster is pinned, watched events are still folded and compiled, but the published rules stay
 * those of the rollback until a resume publishes the compiled state. Node membership is the
 * exception: nodes joining, leaving or changing zone are facts, not rules, so they are published
 * while pinned too (a new node gets the pinned rules through the variants that match it).
 *
 * <p>The rules are compiled from the view's state without the Services the API server would have
 * refused ({@link Admission}: a ClusterIP or NodePort claimed twice); {@link #admissionProblems()} says which.
 *
 * <p>The head also holds the cluster's current problem reports ({@link ProblemReports}): objects the
 * watcher refused. They are state, not rules: a batch of reports and digests alone is not even
 * compiled, and never makes a version.
 */
public final class ClusterHead {
    private final String cluster;
    private final ClusterView view;
    private final Admission admission;
    private final CompiledCluster compiled;
    private final ClusterRules published;
    private final long version;
    private final Pin pin;
    private final ProblemReports problems;
    /** The {@link Lineage} of {@code version}. */
    private final String lineage;
    /** While nothing is published: the kinds a watcher's first listing has yet to deliver (see {@link #awaitingListing()}). */
    private final Set<ObjectKind> unlisted;

    /** The cluster is held at what rollback {@code actionId} published (the rules of {@code toVersion}). */
    public record Pin(long actionId, long toVersion) {}

    /** The stored versions' rules, which a rollback republishes. */
    public interface History {
        /** Knows no versions: every rollback is refused. */
        History NONE = v -> Optional.empty();

        Optional<ClusterRules> rules(long version);
    }

    /** What became of one operator action: carried out, or refused and why. */
    public record ActionOutcome(OperatorAction action, String refusal) {
        public boolean accepted() {
            return refusal == null;
        }
    }

    private ClusterHead(
            String cluster,
            ClusterView view,
            Admission admission,
            CompiledCluster compiled,
            ClusterRules published,
            long version,
            Pin pin,
            ProblemReports problems,
            String lineage,
            Set<ObjectKind> unlisted) {
        this.cluster = cluster;
        this.view = view;
        this.admission = admission;
        this.compiled = compiled;
        this.published = published;
        this.version = version;
        this.pin = pin;
        this.problems = problems;
        this.lineage = lineage;
        this.unlisted = unlisted;
    }

    /** A cluster no event has been seen for: version 0, no rules. */
    public static ClusterHead empty(String cluster) {
        return new ClusterHead(
                cluster,
                ClusterView.EMPTY,
                Admission.EMPTY,
                null,
                ClusterRules.EMPTY,
                0,
                null,
                ProblemReports.NONE,
                Lineage.UNKNOWN,
                Set.of());
    }

    /**
     * A head rebuilt after a restart: the view is the fold of every stored event, and the latest
     * stored version is {@code version} with content {@code published}, pinned by {@code pin} (or
     * null), of {@code lineage}. If today's compiler compiles the view differently (an upgrade),
     * {@link #pendingDiff()} says so.
     */
    public static ClusterHead rebuilt(
            String cluster, List<ClusterEvent> events, long version, ClusterRules published, Pin pin, String lineage) {
        ClusterView view = ClusterFold.applyAll(ClusterView.EMPTY, events).view();
        Admission admission = Admission.of(view.state());
        boolean facts = events.stream().anyMatch(e -> !ProblemReports.leavesRulesAlone(e));
        CompiledCluster compiled =
                version == 0 && !facts ? null : ClusterCompiler.compile(admission.admit(view.state()), view.settings());
        return new ClusterHead(
                cluster,
                view,
                admission,
                compiled,
                published,
                version,
                pin,
                ProblemReports.NONE.applyAll(events),
                lineage,
                unlisted(Set.of(), version, events));
    }

    /**
     * A watcher's {@link StateDigest} compared with the view folded from every event before it:
     * {@code differences} is empty when they agree, and otherwise says how they differ.
     */
    public record DigestCheck(StateDigest digest, List<String> differences) {
        public DigestCheck {
            differences = List.copyOf(differences);
        }

        public boolean agrees() {
            return differences.isEmpty();
        }
    }

    /**
     * The result of applying a batch of events.
     *
     * @param newVersion whether the batch produced a new version ({@code next.version()} is then one higher)
     * @param actions the batch's operator actions, in order, each carried out or refused
     * @param digests the batch's state digests, in order, each checked against the view at its place in the log
     */
    public record Step(
            ClusterHead next,
            Changes changes,
            RulesDiff diff,
            boolean newVersion,
            List<ActionOutcome> actions,
            List<DigestCheck> digests) {
        public Step {
            actions = List.copyOf(actions);
            digests = List.copyOf(digests);
        }
    }

    /** {@link #apply(List, History)} for batches without rollbacks. */
    public Step apply(List<ClusterEvent> events) {
        return apply(events, History.NONE);
    }

    public Step apply(List<ClusterEvent> events, History history) {
        for (ClusterEvent e : events) {
            if (!e.cluster().equals(cluster)) {
                throw new IllegalArgumentException("event of cluster " + e.cluster() + " applied to " + cluster);
            }
        }
        List<DigestCheck> digests = new ArrayList<>();
        ProblemReports[] reports = {problems};
        ClusterFold.Folded folded = foldChecking(events, digests, reports);
        Set<ObjectKind> nextUnlisted = unlisted(unlisted, version, events);
        if (events.stream().allMatch(ProblemReports::leavesRulesAlone)) {
            // Only reports, checks and the start of a listing: nothing to compile, and no version (even if today's
            // compiler
            // would compile the view differently: that shows in the next version made of facts).
            ClusterHead head = new ClusterHead(
                    cluster, view, admission, compiled, published, version, pin, reports[0], lineage, nextUnlisted);
            return new Step(
                    head, Changes.NONE, RulesDiff.between(published, published, List.of()), false, List.of(), digests);
        }
        Admission.Update admitted =
                admission.update(folded.view().state(), folded.changes().services());
        ClusterState state = admitted.next().admit(folded.view().state());
        CompiledCluster next;
        Collection<Unit> touched = null;
        if (compiled == null) {
            next = ClusterCompiler.compile(state, folded.view().settings());
        } else {
            // A Service let in or left out because another one came or went is compiled again too.
            Set<NamespacedName> services = new TreeSet<>(folded.changes().services());
            services.addAll(admitted.flipped());
            CompiledCluster.Update u = compiled.update(
                    state, folded.view().settings(), services, folded.changes().nodes());
            next = u.compiled();
            // Only when the published rules are what we last compiled may the diff look at touched units alone.
            touched = published.equals(compiled.rules()) ? u.touched() : null;
        }

        // Operator actions, in log order. A rollback may name any version stored before this batch.
        Pin nextPin = pin;
        ClusterRules pinned = pin == null ? null : published;
        boolean acted = false;
        List<ActionOutcome> outcomes = new ArrayList<>();
        for (ClusterEvent e : events) {
            if (e instanceof RollbackRequested r) {
                Optional<ClusterRules> target =
                        r.toVersion() <= version ? history.rules(r.toVersion()) : Optional.empty();
                if (target.isEmpty()) {
                    outcomes.add(new ActionOutcome(
                            r,
                            r.toVersion() <= version
                                    ? "version " + r.toVersion() + " is no longer stored (retention removed it)"
                                    : "version " + r.toVersion() + " does not exist (the latest is " + version + ")"));
                    continue;
                }
                nextPin = new Pin(r.actionId(), r.toVersion());
                pinned = target.get();
                acted = true;
                outcomes.add(new ActionOutcome(r, null));
            } else if (e instanceof ResumeRequested r) {
                if (nextPin == null) {
                    outcomes.add(new ActionOutcome(r, "the cluster is not pinned: there is nothing to resume"));
                    continue;
                }
                nextPin = null;
                pinned = null;
                acted = true;
                outcomes.add(new ActionOutcome(r, null));
            }
        }

        // Pinned, the rules are the rollback's but the nodes are the cluster's: a node that joins gets the
        // pinned rules (through the variants that match it), and one that left is no longer addressed.
        ClusterRules target =
                nextPin == null ? next.rules() : pinned.withNodes(next.rules().nodes());
        // Held by a pin with no action in the batch, no fragment can differ: only the nodes are compared.
        Collection<Unit> compare = acted ? null : pin != null ? List.of() : touched;
        RulesDiff diff = RulesDiff.between(published, target, compare);
        boolean newVersion = acted || !diff.isEmpty();
        ClusterHead head = new ClusterHead(
                cluster,
                folded.view(),
                admitted.next(),
                next,
                newVersion ? target : published,
                newVersion ? version + 1 : version,
                nextPin,
                reports[0],
                newVersion ? Lineage.next(lineage, version + 1, diff) : lineage,
                nextUnlisted);
        Step step = new Step(head, folded.changes(), diff, newVersion, outcomes, digests);
        if (version == 0 && !nextUnlisted.isEmpty()) {
            // A partial state is never a cluster's first version: the nodes would lose what the rest of the listing
            // holds.
            return withheld(
                    step,
                    "cluster " + cluster + " has no version yet: its watcher's first listing of " + kinds(nextUnlisted)
                            + " has not come");
        }
        return step;
    }

    /**
     * The kinds still to be listed after {@code events}: a {@link ListingStarted} asks for every kind, a {@link SyncMarker}
     * delivers its own. Only a cluster with nothing published is held, so once it has a version this is always empty.
     */
    private static Set<ObjectKind> unlisted(Set<ObjectKind> before, long version, List<ClusterEvent> events) {
        if (version > 0) {
            return Set.of();
        }
        EnumSet<ObjectKind> out = before.isEmpty() ? EnumSet.noneOf(ObjectKind.class) : EnumSet.copyOf(before);
        for (ClusterEvent e : events) {
            if (e instanceof ListingStarted) {
                out = EnumSet.allOf(ObjectKind.class);
            } else if (e instanceof SyncMarker m) {
                out.remove(m.kind());
            }
        }
        return Collections.unmodifiableSet(out);
    }

    private static String kinds(Set<ObjectKind> kinds) {
        return kinds.stream().map(ObjectKind::apiName).collect(Collectors.joining(", "));
    }

    /**
     * Folds {@code events} into this head's view, and the problem reports into {@code reports[0]}. A
     * digest describes the watcher's state after the events before it, so each is checked against the
     * view and reports folded up to its place in the batch.
     */
    private ClusterFold.Folded foldChecking(
            List<ClusterEvent> events, List<DigestCheck> digests, ProblemReports[] reports) {
        ClusterView v = view;
        Changes changes = Changes.NONE;
        int from = 0;
        for (int i = 0; i < events.size(); i++) {
            reports[0] = reports[0].apply(events.get(i));
            if (events.get(i) instanceof StateDigest d) {
                ClusterFold.Folded f = ClusterFold.applyAll(v, events.subList(from, i));
                v = f.view();
                changes = changes.plus(f.changes());
                List<String> differences = new ArrayList<>(d.differences(v.state(), v.settings()));
                if (d.problems() != null && !d.problems().equals(reports[0].fingerprint())) {
                    differences.add("sources with problems: "
                            + reports[0].bySource().size() + " here, "
                            + d.problems().count() + " at the watcher"
                            + (reports[0].bySource().size() == d.problems().count()
                                    ? ", with different problems"
                                    : ""));
                }
                digests.add(new DigestCheck(d, differences));
                from = i + 1;
            }
        }
        ClusterFold.Folded rest = ClusterFold.applyAll(v, events.subList(from, events.size()));
        return from == 0 ? rest : new ClusterFold.Folded(rest.view(), changes.plus(rest.changes()));
    }

    /**
     * {@code step} (this head's {@link #apply}) with its events folded but nothing published: the head keeps its
     * version, rules and pin, and every operator action of the batch is refused with {@code reason}. For a cluster whose
     * folded state is known to be incomplete (its early events were removed and its checkpoint does not read back):
     * publishing from it would take from the nodes whatever the missing events held.
     */
    public Step withheld(Step step, String reason) {
        ClusterHead n = step.next();
        ClusterHead kept = new ClusterHead(
                cluster, n.view, n.admission, n.compiled, published, version, pin, n.problems, lineage, n.unlisted);
        List<ActionOutcome> refused = step.actions().stream()
                .map(a -> new ActionOutcome(a.action(), reason))
                .toList();
        return new Step(
                kept,
                step.changes(),
                RulesDiff.between(published, published, List.of()),
                false,
                refused,
                step.digests());
    }

    /**
     * This head with what it compiles taken as its published rules, unpinned, at the same version: the base of a what-if
     * ({@link io.rulesync.compiler.plan.WhatIf}). Applying events to it gives a diff that is their effect alone, neither
     * the changes a pin holds back nor those of events not yet in a version, and compares only the units they touch.
     */
    public ClusterHead compiledAsPublished() {
        ClusterRules rules = compiled == null ? ClusterRules.EMPTY : compiled.rules();
        return new ClusterHead(cluster, view, admission, compiled, rules, version, null, problems, lineage, unlisted);
    }

    /** What a version would have to change to catch up with today's compile (empty normally; held changes while pinned). */
    public RulesDiff pendingDiff() {
        return compiled == null
                ? RulesDiff.between(published, published, null)
                : RulesDiff.between(published, compiled.rules(), null);
    }

    /**
     * The version due because today's compiler compiles this head's view differently from its newest stored
     * version (an upgrade of the compiler, or a decoder that now refuses some stored events): the same view,
     * published as compiled, one version up. Empty when they agree, when nothing was ever published, and while
     * pinned (a pin holds the rules on purpose; the resume publishes what is compiled).
     */
    public Optional<Step> recompiled() {
        if (pin != null || version == 0 || compiled == null) {
            return Optional.empty();
        }
        RulesDiff diff = pendingDiff();
        if (diff.isEmpty()) {
            return Optional.empty();
        }
        ClusterHead next = new ClusterHead(
                cluster,
                view,
                admission,
                compiled,
                compiled.rules(),
                version + 1,
                null,
                problems,
                Lineage.next(lineage, version + 1, diff),
                Set.of());
        return Optional.of(new Step(next, Changes.NONE, diff, true, List.of(), List.of()));
    }

    public String cluster() {
        return cluster;
    }

    public ClusterView view() {
        return view;
    }

    /**
     * What the API server would have refused that the view holds, or left out of the rules: each
     * Service left out for a ClusterIP or NodePort another Service holds (naming both and the
     * field), and each load-balancer IP in a special range. In Service name order; equal views give
     * equal lists.
     */
    public List<Problem> admissionProblems() {
        return admission.problems();
    }

    public ClusterRules published() {
        return published;
    }

    public long version() {
        return version;
    }

    /** The {@link Lineage} of {@link #version()} (unknown at version 0). */
    public String lineage() {
        return lineage;
    }

    /** The rollback holding this cluster, or null when changes are published as they come. */
    public Pin pin() {
        return pin;
    }

    /**
     * The kinds whose first full listing a watcher announced ({@link ListingStarted}) and has not yet delivered (its
     * {@link SyncMarker}); empty when none is awaited. A cluster without a version publishes none while this is not empty.
     */
    public Set<ObjectKind> awaitingListing() {
        return unlisted;
    }

    /** The cluster's current problem reports: the objects its watcher refused, per source. */
    public ProblemReports problems() {
        return problems;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterHead h
                && h.cluster.equals(cluster)
                && h.version == version
                && h.view.equals(view)
                && h.published.equals(published)
                && Objects.equals(h.pin, pin)
                && h.problems.equals(problems)
                && h.lineage.equals(lineage)
                && h.unlisted.equals(unlisted);
    }

    @Override
    public int hashCode() {
        return Objects.hash(cluster, version, published);
    }
}
