package io.rulesync.compiler.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class RetentionPolicyTest {
    private static final RetentionPolicy TEN = new RetentionPolicy(OptionalInt.of(10), Optional.empty());
    private static final RetentionPolicy WEEK =
            new RetentionPolicy(OptionalInt.empty(), Optional.of(Duration.ofDays(7)));
    private static final RetentionPolicy BOTH =
            new RetentionPolicy(OptionalInt.of(10), Optional.of(Duration.ofDays(7)));

    @Test
    void aCountLimitKeepsTheNewestVersions() {
        assertThat(TEN.floor(100, OptionalLong.empty(), List.of()))
                .isEqualTo(new RetentionPolicy.Floor(91, Optional.empty()));
        assertThat(TEN.floor(4, OptionalLong.empty(), List.of()).version()).isEqualTo(1);
    }

    @Test
    void anAgeLimitKeepsFromTheFirstYoungVersionAndAlwaysTheHead() {
        assertThat(WEEK.floor(100, OptionalLong.of(40), List.of()).version()).isEqualTo(40);
        // Nothing younger than a week: only the head stays.
        assertThat(WEEK.floor(100, OptionalLong.empty(), List.of()).version()).isEqualTo(100);
    }

    @Test
    void withBothLimitsAVersionEitherKeepsIsKept() {
        assertThat(BOTH.floor(100, OptionalLong.of(95), List.of()).version()).isEqualTo(91);
        assertThat(BOTH.floor(100, OptionalLong.of(40), List.of()).version()).isEqualTo(40);
    }

    @Test
    void holdsKeepOlderVersionsAndSayWhy() {
        List<RetentionPolicy.Hold> holds = List.of(
                new RetentionPolicy.Hold(95, "node a runs version 95"),
                new RetentionPolicy.Hold(50, "node b runs version 50"),
                new RetentionPolicy.Hold(0, "node c holds no version yet"));
        assertThat(TEN.floor(100, OptionalLong.empty(), holds))
                .isEqualTo(new RetentionPolicy.Floor(50, Optional.of("node b runs version 50")));
        // A hold above the policy's floor changes nothing.
        assertThat(TEN.floor(100, OptionalLong.empty(), List.of(new RetentionPolicy.Hold(99, "x"))))
                .isEqualTo(new RetentionPolicy.Floor(91, Optional.empty()));
    }

    @Test
    void withoutLimitsEverythingIsKept() {
        assertThat(RetentionPolicy.KEEP_ALL.keepsAll()).isTrue();
        assertThat(RetentionPolicy.KEEP_ALL
                        .floor(1_000, OptionalLong.of(999), List.of())
                        .version())
                .isEqualTo(1);
        assertThat(TEN.floor(0, OptionalLong.empty(), List.of()).version()).isZero();
    }

    @Test
    void limitsThatKeepNothingAreRefused() {
        assertThatThrownBy(() -> new RetentionPolicy(OptionalInt.of(0), Optional.empty()))
                .hasMessageContaining("at least 1 version");
        assertThatThrownBy(() -> new RetentionPolicy(OptionalInt.empty(), Optional.of(Duration.ZERO)))
                .hasMessageContaining("positive");
    }
}
