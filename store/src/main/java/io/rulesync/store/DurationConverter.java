package io.rulesync.store;

import java.time.Duration;
import picocli.CommandLine.ITypeConverter;

/**
 * Durations as operators write them: {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 30d} (a bare number is
 * milliseconds).
 * Beside {@link DatabaseOptions} because both roles take {@code --action-timeout} (the operator actions' expiry)
 * and must read it alike.
 */
public final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        String v = value.trim().toLowerCase();
        if (v.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        }
        if (v.endsWith("s")) {
            return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        if (v.endsWith("m")) {
            return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        if (v.endsWith("d")) {
            return Duration.ofDays(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        if (v.endsWith("h")) {
            return Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        return Duration.ofMillis(Long.parseLong(v));
    }
}
