package io.rulesync.api.rollout;

import java.time.Instant;

/**
 * Where one cluster's rollout stands: the version going out, the version every node not yet released to keeps
 * ({@code stable}, the last version that completed every wave), and the newest wave opened.
 *
 * @param revision bumped by every change, so that two api replicas deciding at once store one decision
 */
public record Rollout(
        String cluster,
        long version,
        long stable,
        int wave,
        Instant waveOpenedAt,
        Instant startedAt,
        State state,
        String cause,
        long revision) {

    public enum State {
        /** Waves open as they bake. */
        ROLLING,
        /** An operator paused it: no wave opens until promoted. */
        PAUSED,
        /** Nodes failed it: it stays on the nodes that have it, the rest keep {@code stable}, until a newer version. */
        HALTED,
        /** Every wave has it. */
        COMPLETE
    }

    /** A cluster seen for the first time under a policy: what it runs now counts as rolled out. */
    public static Rollout settled(String cluster, long version, Instant now) {
        return new Rollout(cluster, version, version, 0, now, now, State.COMPLETE, null, 0);
    }

    /**
     * This rollout under a policy of {@code waves} waves: a policy changed meanwhile to fewer waves than were opened has its
     * last wave open. Same revision: nothing is stored by reading it so.
     */
    public Rollout within(int waves) {
        return wave < waves
                ? this
                : new Rollout(cluster, version, stable, waves - 1, waveOpenedAt, startedAt, state, cause, revision);
    }

    /** Rolling or paused: waves still to open, acks that count, and a rollback may supersede it. */
    public boolean inProgress() {
        return state == State.ROLLING || state == State.PAUSED;
    }

    /** The newest version a node of wave {@code nodeWave} may run. */
    public long releasedTo(int nodeWave) {
        return state == State.COMPLETE || nodeWave <= wave ? version : stable;
    }

    Rollout with(State s, int w, Instant openedAt, String why) {
        return new Rollout(cluster, version, stable, w, openedAt, startedAt, s, why, revision + 1);
    }
}
