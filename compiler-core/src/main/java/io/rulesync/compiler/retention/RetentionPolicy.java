package io.rulesync.compiler.retention;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * How much of each cluster's history to keep: its newest {@code versions} versions, and/or the versions younger than
 * {@code age}. A version is kept while any limit given keeps it (with both, the longer history wins); with neither,
 * everything is kept. Whatever the limits, the head is kept, and so is every version something still needs
 * ({@link Hold}): one a node runs, one a pinning rollback republished, one a pending rollback names.
 */
public record RetentionPolicy(OptionalInt versions, Optional<Duration> age) {
    /** Keeps everything. */
    public static final RetentionPolicy KEEP_ALL = new RetentionPolicy(OptionalInt.empty(), Optional.empty());

    public RetentionPolicy {
        Objects.requireNonNull(versions, "versions");
        Objects.requireNonNull(age, "age");
        if (versions.isPresent() && versions.getAsInt() < 1) {
            throw new IllegalArgumentException("retention must keep at least 1 version, not " + versions.getAsInt());
        }
        if (age.isPresent() && (age.get().isNegative() || age.get().isZero())) {
            throw new IllegalArgumentException("retention age must be positive, not " + age.get());
        }
    }

    public boolean keepsAll() {
        return versions.isEmpty() && age.isEmpty();
    }

    /** The time before which versions are old enough to go; empty without an age limit. */
    public Optional<Instant> ageCut(Instant now) {
        return age.map(now::minus);
    }

    /** A version that must be kept, and why (said when it holds the floor below what the policy asks). */
    public record Hold(long version, String why) {}

    /** The oldest version to keep, and what holds it there when that is not the policy ({@code heldBy} empty). */
    public record Floor(long version, Optional<String> heldBy) {}

    /**
     * The floor of a cluster whose head is {@code head}: versions below it may go.
     *
     * @param firstYoung the first version created after the age cut; empty when none is (or there is no age limit)
     */
    public Floor floor(long head, OptionalLong firstYoung, List<Hold> holds) {
        if (head < 1 || keepsAll()) {
            return new Floor(head < 1 ? 0 : 1, Optional.empty());
        }
        long byCount = versions.isPresent() ? Math.max(1, head - versions.getAsInt() + 1) : Long.MAX_VALUE;
        long byAge = age.isPresent() ? firstYoung.orElse(head) : Long.MAX_VALUE;
        // The limits keep what either keeps: the lower floor.
        long policy = Math.min(Math.min(byCount, byAge), head);
        return holds.stream()
                .filter(h -> h.version() >= 1 && h.version() < policy)
                .min(Comparator.comparingLong(Hold::version))
                .map(h -> new Floor(h.version(), Optional.of(h.why())))
                .orElse(new Floor(policy, Optional.empty()));
    }
}
