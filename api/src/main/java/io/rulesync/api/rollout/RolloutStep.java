package io.rulesync.api.rollout;

import io.rulesync.model.cluster.KubernetesNames;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * What a rollout does next, from its state, its policy, the nodes' reports and the time. Pure: the controller reads
 * the inputs, stores the decision and records it.
 */
public final class RolloutStep {
    private RolloutStep() {}

    /** What the agents' acks say about one node. */
    public record NodeReport(long running, Long failedVersion, String error) {}

    /** A decision. */
    public sealed interface Step {
        /** Nothing to do now. */
        record None() implements Step {}

        /** A new version starts at the first wave. */
        record Start(Rollout rollout, String why) implements Step {}

        /** The next wave opens (or, past the last, the rollout is complete). */
        record Advance(Rollout rollout, String why) implements Step {}

        /** Nodes failed the version. */
        record Fail(Rollout rollout, String why, List<String> nodes) implements Step {}
    }

    /**
     * @param halted   versions an earlier rollout halted: a node's failure of one of those (an agent retries a version it
     *                 could not apply) is that rollout's, not this one's
     * @param rollback the newest version after the one rolling out that an operator's rollback made (0: none)
     */
    public static Step next(
            Rollout r,
            RolloutPolicy p,
            Waves waves,
            Map<String, NodeReport> reports,
            LongPredicate halted,
            long head,
            long rollback,
            Instant now) {
        switch (r.state()) {
            case COMPLETE -> {
                return head > r.version()
                        ? start(r, r.version(), head, now, "version " + head + " is new")
                        : new Step.None();
            }
            case HALTED -> {
                // A newer version (a fix, or a rollback) supersedes a halted one; the halted one never reaches the
                // rest.
                return head > r.version()
                        ? start(
                                r,
                                r.stable(),
                                head,
                                now,
                                "version " + head + " supersedes halted version " + r.version())
                        : new Step.None();
            }
            default -> {
                // ROLLING or PAUSED: a newer head waits for this one to finish (see ARCHITECTURE.md "Staged rollout"),
                // except a
                // rollback: an operator taking the cluster back must not wait for the version they are taking it back
                // from to
                // reach every wave first. It supersedes the rolling version, as a fix supersedes a halted one.
                if (rollback > r.version() && rollback <= head) {
                    return start(
                            r,
                            r.stable(),
                            head,
                            now,
                            "version " + rollback + " is a rollback: it supersedes version " + r.version()
                                    + ", which was still rolling out"
                                    + (head > rollback ? " (with version " + head + ", the newest)" : ""));
                }
            }
        }
        List<String> failed = new ArrayList<>();
        for (String n : waves.upTo(r.wave()).stream().sorted().toList()) {
            NodeReport rep = reports.get(n);
            if (rep != null
                    && rep.failedVersion() != null
                    && rep.failedVersion() > r.stable()
                    && rep.failedVersion() <= r.version()
                    && !halted.test(rep.failedVersion())
                    && rep.running() < r.version()) {
                failed.add(n);
            }
        }
        if (!failed.isEmpty()) {
            StringBuilder why = new StringBuilder(failed.size() + " node" + (failed.size() == 1 ? "" : "s")
                    + " failed version " + r.version() + ": ");
            for (int i = 0; i < Math.min(5, failed.size()); i++) {
                NodeReport rep = reports.get(failed.get(i));
                why.append(i == 0 ? "" : "; ")
                        .append(failed.get(i))
                        .append(" (")
                        .append(rep.error() == null ? "no error given" : KubernetesNames.printable(rep.error()))
                        .append(')');
            }
            if (failed.size() > 5) {
                why.append("; and ").append(failed.size() - 5).append(" more");
            }
            return new Step.Fail(
                    r.with(Rollout.State.HALTED, r.wave(), r.waveOpenedAt(), why.toString()), why.toString(), failed);
        }
        List<String> wave = waves.nodes(r.wave());
        List<String> missing = wave.stream()
                .filter(n -> reports.get(n) == null || reports.get(n).running() < r.version())
                .toList();
        boolean acked = missing.size() <= Math.floor(p.unacked() * wave.size());
        if (!acked && !now.isBefore(r.waveOpenedAt().plus(p.ackTimeout()))) {
            String why = missing.size() + " of " + wave.size() + " nodes of wave '"
                    + p.waves().get(r.wave()).name()
                    + "' did not acknowledge version " + r.version() + " within "
                    + p.ackTimeout().toSeconds() + " s: "
                    + String.join(", ", missing.subList(0, Math.min(5, missing.size())))
                    + (missing.size() > 5 ? ", ..." : "");
            return new Step.Fail(r.with(Rollout.State.HALTED, r.wave(), r.waveOpenedAt(), why), why, missing);
        }
        if (r.state() == Rollout.State.PAUSED
                || !acked
                || !wave.isEmpty() && !bakeLeft(r, p, now).isZero()) {
            return new Step.None();
        }
        return advance(
                r,
                p,
                now,
                "wave '" + p.waves().get(r.wave()).name() + "' "
                        + (wave.isEmpty()
                                ? "has no nodes"
                                : "baked "
                                        + p.waves().get(r.wave()).bake().toSeconds() + " s with "
                                        + (wave.size() - missing.size()) + " of " + wave.size()
                                        + " nodes acknowledged"));
    }

    /** Opens the next wave now, or completes the rollout after the last; an operator's promote, or a wave that baked. */
    public static Step.Advance advance(Rollout r, RolloutPolicy p, Instant now, String why) {
        if (r.wave() + 1 >= p.waves().size()) {
            return new Step.Advance(
                    r.with(Rollout.State.COMPLETE, r.wave(), r.waveOpenedAt(), null),
                    why + "; every wave has version " + r.version());
        }
        return new Step.Advance(
                r.with(Rollout.State.ROLLING, r.wave() + 1, now, null),
                why + "; wave '" + p.waves().get(r.wave() + 1).name() + "' opens");
    }

    /** How long the newest opened wave still bakes (zero when done). */
    public static Duration bakeLeft(Rollout r, RolloutPolicy p, Instant now) {
        if (r.state() == Rollout.State.COMPLETE) {
            return Duration.ZERO;
        }
        Duration left = Duration.between(
                now,
                r.waveOpenedAt()
                        .plus(p.waves()
                                .get(Math.min(r.wave(), p.waves().size() - 1))
                                .bake()));
        return left.isNegative() ? Duration.ZERO : left;
    }

    private static Step start(Rollout r, long stable, long head, Instant now, String why) {
        return new Step.Start(
                new Rollout(r.cluster(), head, stable, 0, now, now, Rollout.State.ROLLING, null, r.revision() + 1),
                why);
    }
}
