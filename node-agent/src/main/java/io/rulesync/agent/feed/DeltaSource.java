package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesDelta;
import java.time.Duration;
import java.util.List;

/** Where an agent's deltas come from: the api's watch ({@link ApiDeltas}), or the deltas topic ({@link DeltaFeed}). */
public interface DeltaSource extends AutoCloseable {
    /** What one poll brought: whole deltas in order, and, when the source knows the agent missed some, why. */
    record Polled(List<RulesDelta> deltas, String gap) {
        public static final Polled NOTHING = new Polled(List.of(), null);

        public Polled {
            deltas = List.copyOf(deltas);
        }
    }

    /** Gets ready to read; called before the agent loads its first version, and may wait up to {@code timeout}. */
    void start(Duration timeout);

    /** What arrived within {@code wait}. */
    Polled poll(Duration wait);

    /** Makes a blocked {@link #poll} return early. */
    void wakeup();

    @Override
    void close();
}
