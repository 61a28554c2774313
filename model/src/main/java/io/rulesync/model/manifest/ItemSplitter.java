package io.rulesync.model.manifest;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import org.snakeyaml.engine.v2.events.DocumentEndEvent;
import org.snakeyaml.engine.v2.events.DocumentStartEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.NodeEvent;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.parser.Parser;

/**
 * A YAML parser's events, rearranged so that a composer builds one object at a time: each item of a document's
 * top-level {@code items} sequence (a {@code kind: List}, as {@code kubectl get -o yaml} writes) becomes a document of
 * its own, handed on as soon as it ends, and the rest of that document (apiVersion, kind, metadata) follows its items
 * as one more document. {@code kubectl} writes {@code items} before {@code kind}, so whether the document was a List is
 * known only at its end: {@link #nextPiece} says what each document handed on was, and the caller judges then.
 *
 * <p>Memory is bounded by the largest object, not by the text: nothing of an item is kept once the composer has taken
 * it, and an object (an item, or a document with its items left out) whose text grows past {@code maxObjectChars} ends
 * the parse with {@link TooLarge} as soon as that is seen. An anchor in one item cannot be used by another.
 */
final class ItemSplitter implements Parser {
    /** What a document handed to the composer stands for. */
    sealed interface Piece {
        /** The document of the text (from 1) this piece is, or is part of. */
        int document();

        /** Where it is, as problems name it: {@code file (document 2)}, {@code file (document 1, items[3])}. */
        default String source(String name) {
            return name + " (document " + document() + ")";
        }

        /** The {@code document}-th document of the text, whole. */
        record Whole(int document) implements Piece {}

        /** The {@code index}-th item (from 0) of the {@code document}-th document's top-level {@code items}. */
        record Item(int document, int index) implements Piece {
            @Override
            public String source(String name) {
                return name + " (document " + document + ", items[" + index + "])";
            }
        }

        /** The {@code document}-th document without its {@code items}, of which there were {@code items} (-1: none taken out). */
        record Rest(int document, int items) implements Piece {}
    }

    /** An object's text past the limit: the parse ends here. */
    static final class TooLarge extends RuntimeException {
        final Piece piece;
        final long chars;

        TooLarge(Piece piece, long chars) {
            super(null, null, false, false);
            this.piece = piece;
            this.chars = chars;
        }
    }

    private enum State {
        BETWEEN,
        ROOT,
        WHOLE,
        KEY,
        COMPLEX_KEY,
        VALUE,
        ITEMS,
        ITEM,
        REST_END
    }

    private final Parser events;
    private final long maxObjectChars;
    private final Deque<Event> ready = new ArrayDeque<>();
    private final Deque<Piece> pieces = new ArrayDeque<>();
    private State state = State.BETWEEN;
    private int document;
    private int depth;
    private DocumentStartEvent documentStart;
    private final List<Event> rest = new ArrayList<>();
    private int items;
    private long objectStart;
    private long itemsStart;
    private long itemsChars;
    private long consumed;

    ItemSplitter(Parser events, long maxObjectChars) {
        this.events = events;
        this.maxObjectChars = maxObjectChars;
    }

    /** What the next document the composer returns stands for; one per document, in order. */
    Piece nextPiece() {
        return pieces.removeFirst();
    }

    /** How far into the text the parser's events have come, in characters: the reader's guard against one huge token. */
    long consumed() {
        return consumed;
    }

    @Override
    public boolean checkEvent(Event.ID id) {
        return hasNext() && peekEvent().getEventId() == id;
    }

    @Override
    public Event peekEvent() {
        fill();
        return ready.getFirst();
    }

    @Override
    public Event next() {
        fill();
        return ready.removeFirst();
    }

    @Override
    public boolean hasNext() {
        while (ready.isEmpty() && events.hasNext()) {
            step(events.next());
        }
        return !ready.isEmpty();
    }

    private void fill() {
        if (!hasNext()) {
            throw new NoSuchElementException("no more events");
        }
    }

    private void step(Event e) {
        consumed = Math.max(consumed, index(e.getEndMark()));
        switch (state) {
            case BETWEEN -> {
                if (e instanceof DocumentStartEvent start) {
                    document++;
                    documentStart = start;
                    objectStart = index(start.getStartMark());
                    state = State.ROOT;
                } else {
                    ready.add(e); // the stream's start and end
                }
            }
            case ROOT -> {
                if (e.getEventId() == Event.ID.MappingStart && !anchored(e)) {
                    rest.clear();
                    rest.add(documentStart);
                    rest.add(e);
                    items = -1;
                    itemsChars = 0;
                    depth = 0;
                    state = State.KEY;
                } else {
                    pieces.add(new Piece.Whole(document));
                    ready.add(documentStart);
                    ready.add(e);
                    depth = opens(e);
                    state = State.WHOLE;
                }
            }
            case WHOLE -> {
                ready.add(e);
                if (e.getEventId() == Event.ID.DocumentEnd) {
                    state = State.BETWEEN;
                } else {
                    depth += opens(e);
                    check(e, objectStart);
                }
            }
            case KEY -> {
                if (e.getEventId() == Event.ID.MappingEnd) {
                    rest.add(e);
                    state = State.REST_END;
                } else if (items < 0
                        && e instanceof ScalarEvent key
                        && key.getValue().equals("items") // plain, or quoted (JSON)
                        && events.hasNext()
                        && events.peekEvent().getEventId() == Event.ID.SequenceStart
                        && !anchored(events.peekEvent())) {
                    Event sequence = events.next();
                    items = 0;
                    itemsStart = index(sequence.getStartMark());
                    state = State.ITEMS;
                } else {
                    keep(e);
                    state = depth == 0 ? State.VALUE : State.COMPLEX_KEY;
                }
            }
            case COMPLEX_KEY -> {
                keep(e);
                if (depth == 0) {
                    state = State.VALUE;
                }
            }
            case VALUE -> {
                keep(e);
                if (depth == 0) {
                    state = State.KEY;
                }
            }
            case ITEMS -> {
                if (e.getEventId() == Event.ID.SequenceEnd) {
                    itemsChars = index(e.getEndMark()) - itemsStart;
                    state = State.KEY;
                    return;
                }
                objectStart = index(e.getStartMark());
                pieces.add(new Piece.Item(document, items));
                ready.add(
                        new DocumentStartEvent(false, Optional.empty(), Map.of(), e.getStartMark(), e.getStartMark()));
                ready.add(e);
                depth = opens(e);
                if (depth == 0) {
                    endItem(e);
                } else {
                    state = State.ITEM;
                }
            }
            case ITEM -> {
                ready.add(e);
                depth += opens(e);
                check(e, objectStart);
                if (depth == 0) {
                    endItem(e);
                }
            }
            case REST_END -> {
                rest.add(e); // the document's end
                pieces.add(new Piece.Rest(document, items));
                ready.addAll(rest);
                rest.clear();
                state = State.BETWEEN;
            }
        }
    }

    /** An event of the document's own keys and values, kept until its items have been handed on. */
    private void keep(Event e) {
        rest.add(e);
        depth += opens(e);
        check(e, index(documentStart.getStartMark()) + itemsChars);
    }

    /** The object being read has run past the limit inside one token (the reader saw it first). */
    TooLarge tooLarge(long chars) {
        return new TooLarge(
                state == State.ITEM || state == State.ITEMS
                        ? new Piece.Item(document, items)
                        : new Piece.Whole(document),
                chars);
    }

    private void endItem(Event last) {
        ready.add(new DocumentEndEvent(false, last.getEndMark(), last.getEndMark()));
        items++;
        state = State.ITEMS;
    }

    /** Ends the parse when the object being read, from {@code start}, has run past the limit by {@code e}. */
    private void check(Event e, long start) {
        long chars = index(e.getEndMark()) - start;
        if (chars > maxObjectChars) {
            throw tooLarge(chars);
        }
    }

    private static int opens(Event e) {
        return switch (e.getEventId()) {
            case MappingStart, SequenceStart -> 1;
            case MappingEnd, SequenceEnd -> -1;
            default -> 0;
        };
    }

    /** An anchored collection may be named by an alias elsewhere in its document: it is composed whole. */
    private static boolean anchored(Event e) {
        return e instanceof NodeEvent n && n.getAnchor().isPresent();
    }

    private static long index(Optional<Mark> mark) {
        return mark.map(Mark::getIndex).orElse(0);
    }
}
