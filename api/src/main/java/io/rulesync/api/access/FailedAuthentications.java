package io.rulesync.api.access;

import io.rulesync.model.cluster.KubernetesNames;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which failed authentications to log: the first from a remote address, then at most one per
 * {@code interval} from it, which says how many were left out since the last. Someone trying tokens
 * shows up in the log without flooding it. The line never holds the token.
 *
 * <p>At most {@code maxAddresses} addresses are remembered (the least recently failing go first),
 * so many addresses cost bounded memory; a forgotten address's left-out count is lost, which the
 * failure counter in the metrics does not.
 */
public final class FailedAuthentications {
    private final Duration interval;
    private final InstantSource clock;
    private final Map<String, Seen> byAddress;

    private static final class Seen {
        Instant logged;
        long leftOut;
    }

    public FailedAuthentications(Duration interval, int maxAddresses, InstantSource clock) {
        this.interval = interval;
        this.clock = clock;
        this.byAddress = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Seen> eldest) {
                return size() > maxAddresses;
            }
        };
    }

    /**
     * The failure counter's {@code reason} tag for a reason: the few fixed reasons as they are, and every reason a node
     * token was refused for as one (those name clusters, times and claims: a tag of each would grow without bound).
     */
    public static String kind(String reason) {
        return switch (reason) {
            case "no Authorization header", "the Authorization header holds no bearer token", "unknown token" -> reason;
            default -> "invalid node token";
        };
    }

    /**
     * Records a failure and returns the line to log for it, or empty when this address had one
     * logged within the interval (the failure is counted for the next line).
     */
    public synchronized Optional<String> failed(String method, String path, String remote, String reason) {
        Instant now = clock.instant();
        Seen seen = byAddress.computeIfAbsent(remote, r -> new Seen());
        if (seen.logged != null && now.isBefore(seen.logged.plus(interval))) {
            seen.leftOut++;
            return Optional.empty();
        }
        String line =
                "authentication failed: " + KubernetesNames.printable(method) + " " + KubernetesNames.printable(path)
                        + " from " + remote + ": " + reason
                        + (seen.leftOut == 0
                                ? ""
                                : " (" + seen.leftOut + " more from " + remote + " since the last line, not logged)");
        seen.logged = now;
        seen.leftOut = 0;
        return Optional.of(line);
    }
}
