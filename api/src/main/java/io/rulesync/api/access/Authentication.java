package io.rulesync.api.access;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who presents a bearer credential, decided one way for the REST endpoints ({@link BearerTokenFilter}) and the node
 * streams alike: an address that failed too often is refused before its credential is looked at ({@link RateLimits});
 * otherwise the {@code Authorization} value's bearer token is checked ({@link Credentials}). Each failure is counted
 * ({@value #FAILURES}, by reason), charged to the address, and logged as {@link FailedAuthentications} allows: never
 * the token.
 */
public final class Authentication {
    private static final Logger log = LoggerFactory.getLogger(Authentication.class);

    /** The counter of refused authentications, tagged {@code reason}. */
    public static final String FAILURES = "rulesync.api.authentication.failures";
    /** What a caller whose token is unknown, revoked or expired is told; why is only logged. */
    public static final String NOT_VALID = "the bearer token is not one the api knows, or no longer valid";

    /** Why a caller is refused. */
    public enum Refusal {
        /** Its address failed too often lately: refused before its credential is looked at. */
        TOO_MANY_FAILURES,
        /** No bearer token at all. */
        NO_BEARER_TOKEN,
        /** A token, but not a valid one. */
        NOT_VALID
    }

    /**
     * The caller and the token it presented; or, refused, why, and (for {@link Refusal#TOO_MANY_FAILURES}) how long to
     * wait.
     */
    public record Outcome(ApiTokens.Caller caller, String bearer, Refusal refusal, Duration retryAfter) {
        static Outcome refused(Refusal refusal) {
            return new Outcome(null, null, refusal, Duration.ZERO);
        }
    }

    private final Credentials credentials;
    private final RateLimits limits;
    private final FailedAuthentications failures;
    private final MeterRegistry meters;

    public Authentication(
            Credentials credentials, RateLimits limits, FailedAuthentications failures, MeterRegistry meters) {
        this.credentials = credentials;
        this.limits = limits;
        this.failures = failures;
        this.meters = meters;
    }

    /**
     * @param authorization the {@code Authorization} value (null: none)
     * @param address       the caller's IP address: what limits and failure logs are kept by
     * @param method        for the failure log: the HTTP method, or what kind of call it is
     * @param target        for the failure log: the path, or the service
     */
    public Outcome authenticate(String authorization, String address, String method, String target) {
        Duration wait = limits.refusedAddress(address);
        if (!wait.isZero()) {
            return new Outcome(null, null, Refusal.TOO_MANY_FAILURES, wait);
        }
        if (authorization == null
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                || authorization.length() == 7) {
            failed(
                    address,
                    method,
                    target,
                    authorization == null
                            ? "no Authorization header"
                            : "the Authorization header holds no bearer token");
            return Outcome.refused(Refusal.NO_BEARER_TOKEN);
        }
        String bearer = authorization.substring(7).strip();
        Credentials.Result result = credentials.authenticate(bearer);
        if (result.caller() == null) {
            failed(address, method, target, result.failure());
            return Outcome.refused(Refusal.NOT_VALID);
        }
        return new Outcome(result.caller(), bearer, null, Duration.ZERO);
    }

    private void failed(String address, String method, String target, String reason) {
        limits.failed(address);
        Counter.builder(FAILURES)
                .description("requests and node streams refused for their credential, by reason")
                .tag("reason", FailedAuthentications.kind(reason))
                .register(meters)
                .increment();
        failures.failed(method, target, address, reason).ifPresent(log::warn);
    }
}
