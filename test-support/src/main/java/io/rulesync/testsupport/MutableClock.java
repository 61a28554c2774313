package io.rulesync.testsupport;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock tests (and benchmarks on simulated time) move by hand, so that nothing waits for real time. */
public final class MutableClock extends Clock {
    private Instant now;

    public MutableClock() {
        this(Instant.parse("2026-11-29T12:00:00Z"));
    }

    public MutableClock(Instant start) {
        this.now = start;
    }

    public void advance(Duration d) {
        now = now.plus(d);
    }

    public void set(Instant at) {
        now = at;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now;
    }
}
