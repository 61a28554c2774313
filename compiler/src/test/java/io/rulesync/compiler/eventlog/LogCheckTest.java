package io.rulesync.compiler.eventlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.eventlog.LogCheck.Verdict;
import io.rulesync.model.topic.LogPosition;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** When a stored position still belongs to the live log, and where to resume when it does not. */
class LogCheckTest {
    private static final String A = "AAAAAAAAAAAAAAAAAAAAAA";
    private static final String B = "BBBBBBBBBBBBBBBBBBBBBB";

    private static Verdict judge(LogPosition stored, LiveLog live) {
        return LogCheck.judge(Optional.ofNullable(stored), live);
    }

    @Test
    void nothingStoredStartsAtTheLogsFirstRecordAndRecordsItsIdentity() {
        Verdict v = judge(null, new LiveLog(A, 40, 90));
        assertThat(v).isInstanceOf(Verdict.Adopted.class);
        assertThat(((Verdict.Adopted) v).note()).isNull();
        assertThat(v.position()).isEqualTo(new LogPosition(40, 0, A, 40, 90));
    }

    @Test
    void theSameLogKeepsThePositionAndRefreshesWhatItKnowsOfTheLog() {
        Verdict v = judge(new LogPosition(50, 2, A, 0, 60), new LiveLog(A, 10, 75));
        assertThat(v).isInstanceOf(Verdict.Same.class);
        assertThat(v.position()).isEqualTo(new LogPosition(50, 2, A, 10, 75));
        // At its very end, too.
        assertThat(judge(new LogPosition(75, 2, A, 10, 75), new LiveLog(A, 10, 75)))
                .isInstanceOf(Verdict.Same.class);
    }

    @Test
    void aTopicCreatedAgainIsADifferentLogEvenWhenItIsLongerThanThePosition() {
        // Kafka itself reads a recreated topic on from the old offset when the new log is long enough.
        Verdict v = judge(new LogPosition(5, 0, A, 0, 5), new LiveLog(B, 0, 10));
        assertThat(v).isInstanceOf(Verdict.Reset.class);
        assertThat(v.position())
                .as("the whole new log is new: from its start, in a new epoch")
                .isEqualTo(new LogPosition(0, 1, B, 0, 10));
        assertThat(((Verdict.Reset) v).reason())
                .contains("a different log")
                .contains(A)
                .contains(B)
                .contains("position 5");
    }

    @Test
    void aPositionStoredBeforeIdentitiesWereKeptIsAdoptedWhenItLiesWithinTheLog() {
        Verdict v = judge(new LogPosition(30, 0, null, 0, 30), new LiveLog(A, 0, 45));
        assertThat(v).isInstanceOf(Verdict.Adopted.class);
        assertThat(((Verdict.Adopted) v).note())
                .contains("without its log's identity")
                .contains(A);
        assertThat(v.position()).isEqualTo(new LogPosition(30, 0, A, 0, 45));
    }

    @Test
    void aPositionPastTheEndOfAnUnidentifiedLogBelongsToAnotherLog() {
        // The demo's case: a new in-process broker starts its topics at 0; the database remembers offset 500.
        Verdict v = judge(new LogPosition(500, 0, null, 0, 500), new LiveLog(A, 0, 12));
        assertThat(v).isInstanceOf(Verdict.Reset.class);
        assertThat(v.position()).isEqualTo(new LogPosition(0, 1, A, 0, 12));
        assertThat(((Verdict.Reset) v).reason()).contains("past its end");
    }

    @Test
    void aLogThatStartsBeforeItUsedToIsAnotherLog() {
        Verdict v = judge(new LogPosition(1200, 3, null, 1000, 1200), new LiveLog(A, 0, 1500));
        assertThat(v).isInstanceOf(Verdict.Reset.class);
        assertThat(v.position()).isEqualTo(new LogPosition(0, 4, A, 0, 1500));
    }

    @Test
    void aTruncatedLogResumesAtItsEndInANewEpochBecauseItsOffsetsWillBeReused() {
        Verdict v = judge(new LogPosition(8, 1, A, 0, 10), new LiveLog(A, 0, 7));
        assertThat(v).isInstanceOf(Verdict.Reset.class);
        assertThat(v.position()).isEqualTo(new LogPosition(7, 2, A, 0, 7));
        assertThat(((Verdict.Reset) v).reason()).contains("lost records").contains("up to 10");
        // Truncated below a position that was behind: resume where it was.
        assertThat(judge(new LogPosition(5, 1, A, 0, 10), new LiveLog(A, 0, 7)).position())
                .isEqualTo(new LogPosition(5, 2, A, 0, 7));
    }

    @Test
    void recordsDeletedBeforeTheyWereReadSkipToTheLogsStartInTheSameEpoch() {
        Verdict v = judge(new LogPosition(100, 1, A, 0, 150), new LiveLog(A, 400, 420));
        assertThat(v).isInstanceOf(Verdict.Reset.class);
        assertThat(v.position())
                .as("offsets keep growing: no new epoch")
                .isEqualTo(new LogPosition(400, 1, A, 400, 420));
        assertThat(((Verdict.Reset) v).reason()).contains("records 100-399 were deleted before being read");
    }
}
