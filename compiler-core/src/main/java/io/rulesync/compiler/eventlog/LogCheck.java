package io.rulesync.compiler.eventlog;

import io.rulesync.model.topic.LogPosition;
import java.util.Optional;

/**
 * Decides whether a stored position still belongs to the live log, and where to resume when it
 * does not. Pure: the caller observes the log ({@link LiveLog}), stores the verdict's position, and
 * asks the watchers for a resync on a {@link Verdict.Reset}.
 *
 * <p>A position is trusted only on the log it was taken from. Any of these means the compiler
 * cannot know that it saw every event, so it resumes at what the live log holds and the watchers
 * publish their clusters' whole state again (events are whole object states, so that heals
 * whatever was missed):
 * <ul>
 *   <li>another topic id: the topic was deleted and created again, or this is another Kafka;</li>
 *   <li>the log starts before it used to, or ends before offsets already read from it: it is not
 *       the same log, or it was truncated (an unclean leader election);</li>
 *   <li>the log starts after the position: records were deleted before they were read (retention
 *       passed a compiler that was stopped or behind).</li>
 * </ul>
 */
public final class LogCheck {
    private LogCheck() {}

    /** What to do with a stored position. {@link #position()} is what to store and where to resume. */
    public sealed interface Verdict {
        LogPosition position();

        /** The log the position was taken from; its start and high water refreshed. */
        record Same(LogPosition position) implements Verdict {}

        /**
         * The first position recorded with its log's identity: nothing was stored yet (start at the
         * beginning), or the stored position predates identities ({@code note} says it was taken on trust).
         */
        record Adopted(LogPosition position, String note) implements Verdict {}

        /** Not the log the position belongs to, or records were lost: resume at {@code position}, and resync. */
        record Reset(LogPosition position, String reason) implements Verdict {}
    }

    public static Verdict judge(Optional<LogPosition> stored, LiveLog live) {
        if (stored.isEmpty()) {
            return new Verdict.Adopted(
                    new LogPosition(live.start(), 0, live.topicId(), live.start(), live.end()), null);
        }
        LogPosition p = stored.get();
        LogPosition fresh = new LogPosition(live.start(), p.epoch() + 1, live.topicId(), live.start(), live.end());
        if (p.topicId() != null && !p.topicId().equals(live.topicId())) {
            return new Verdict.Reset(
                    fresh,
                    "a different log: its topic id is " + live.topicId() + ", but the stored position " + p.next()
                            + " was taken from topic id " + p.topicId()
                            + " (the topic was created again, or Kafka was replaced)");
        }
        if (live.start() < p.start()) {
            return new Verdict.Reset(
                    fresh,
                    "a different log: it starts at offset " + live.start() + ", before offset " + p.start()
                            + " where it started when last seen");
        }
        if (live.end() < p.highWater()) {
            if (p.topicId() == null) {
                return new Verdict.Reset(
                        fresh,
                        "a different log: the stored position " + p.next() + " is past its end (offset " + live.end()
                                + ")");
            }
            // Same topic, fewer records: truncated. Offsets from its end on will be reused, hence the new epoch.
            long resume = Math.min(p.next(), live.end());
            return new Verdict.Reset(
                    new LogPosition(
                            Math.max(resume, live.start()), p.epoch() + 1, live.topicId(), live.start(), live.end()),
                    "the log lost records it had: it ends at offset " + live.end() + ", but offsets up to "
                            + p.highWater() + " were seen in it (truncated, e.g. by an unclean leader election)");
        }
        if (p.next() < live.start()) {
            String lost = live.start() - p.next() == 1
                    ? "record " + p.next() + " was"
                    : "records " + p.next() + "-" + (live.start() - 1) + " were";
            return new Verdict.Reset(
                    new LogPosition(live.start(), p.epoch(), live.topicId(), live.start(), live.end()),
                    lost + " deleted before being read (the log now starts at " + live.start()
                            + ": retention passed a compiler that was stopped or behind)");
        }
        LogPosition same =
                new LogPosition(p.next(), p.epoch(), live.topicId(), live.start(), Math.max(p.highWater(), live.end()));
        if (p.topicId() == null) {
            return new Verdict.Adopted(
                    same,
                    "the stored position " + p.next() + " was stored without its log's identity"
                            + " (by an earlier rulesync); it lies within the log, so it is taken to belong to topic id "
                            + live.topicId());
        }
        return new Verdict.Same(same);
    }
}
