package io.rulesync.compiler.eventlog;

import io.rulesync.model.event.EventParts;
import java.util.List;
import java.util.Optional;
import org.pcollections.HashTreePMap;
import org.pcollections.PMap;
import org.pcollections.PVector;
import org.pcollections.TreePVector;

/**
 * The events too large for one message ({@link EventParts}) being put back together, per cluster.
 * Immutable: {@link #offer} returns the next assembly with the outcome, which the caller adopts once
 * the batch it belongs to committed. Parts come in order, in one transaction of the cluster's one
 * writer; anything else is refused with the reason, and a first part abandons an unfinished event.
 */
public final class EventAssembly {
    public static final EventAssembly EMPTY = new EventAssembly(HashTreePMap.empty());

    private final PMap<String, PVector<EventParts.Part>> pending;

    private EventAssembly(PMap<String, PVector<EventParts.Part>> pending) {
        this.pending = pending;
    }

    /** What one record was. */
    public sealed interface Outcome {
        /** A whole event, or not an event at all: the decoder's business. */
        record NotAPart() implements Outcome {}

        /**
         * A part to store while the rest comes. {@code abandoned}: the parts of an earlier event of the cluster that
         * this first part left unfinished (none normally).
         */
        record Stored(EventParts.Part part, List<EventParts.Part> abandoned) implements Outcome {
            public Stored {
                abandoned = List.copyOf(abandoned);
            }
        }

        /** The last part: the whole event's text, to decode and store at this record's place. */
        record Whole(String json) implements Outcome {}

        /** Not a part that fits: why. */
        record Refused(String reason) implements Outcome {}
    }

    /** The next assembly and what the record was. */
    public record Offer(EventAssembly next, Outcome outcome) {}

    /** Takes one record (its key and value) of the events log. */
    public Offer offer(String key, String value) {
        Optional<EventParts.Part> read;
        try {
            read = EventParts.read(value);
        } catch (IllegalArgumentException e) {
            return refused("a part of an event, unreadable: " + e.getMessage());
        }
        if (read.isEmpty()) {
            return new Offer(this, new Outcome.NotAPart());
        }
        EventParts.Part p = read.get();
        if (!p.cluster().equals(key)) {
            return refused("record key '" + key + "' is not the part's cluster '" + p.cluster() + "'");
        }
        PVector<EventParts.Part> parts = pending.getOrDefault(p.cluster(), TreePVector.empty());
        List<EventParts.Part> abandoned = List.of();
        if (p.part() == 1) {
            abandoned = parts;
            parts = TreePVector.empty();
        } else if (parts.isEmpty() || !parts.get(0).event().equals(p.event()) || parts.size() != p.part() - 1) {
            return refused("part " + p.part() + " of event " + p.event() + " came without the parts before it");
        }
        parts = parts.plus(p);
        if (parts.size() < p.parts()) {
            return new Offer(new EventAssembly(pending.plus(p.cluster(), parts)), new Outcome.Stored(p, abandoned));
        }
        EventAssembly next = new EventAssembly(pending.minus(p.cluster()));
        try {
            return new Offer(next, new Outcome.Whole(EventParts.join(parts)));
        } catch (IllegalArgumentException e) {
            return new Offer(next, new Outcome.Refused(e.getMessage()));
        }
    }

    /** This assembly with {@code cluster}'s unfinished event as stored (its parts, in order). */
    public EventAssembly restored(String cluster, List<EventParts.Part> parts) {
        return parts.isEmpty() ? this : new EventAssembly(pending.plus(cluster, TreePVector.from(parts)));
    }

    /** The parts held of {@code cluster}'s unfinished event. */
    public List<EventParts.Part> pending(String cluster) {
        return pending.getOrDefault(cluster, TreePVector.empty());
    }

    private Offer refused(String reason) {
        return new Offer(this, new Outcome.Refused(reason));
    }
}
