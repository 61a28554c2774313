package io.rulesync.api.access;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who presents a bearer credential: an api token ({@code --tokens-file}, and the lines given inline) or a node's
 * ServiceAccount token ({@code --node-issuers}, {@link NodeIssuers}).
 *
 * <p>The files are read again by {@link #reload()} (every two seconds in the api) and take effect when their content
 * changed: a token removed from the file is refused from then on, on every replica that mounts the file, and
 * {@link #onChange} listeners end the streams it opened. A file that no longer parses is not taken: the api keeps what
 * it had, says why once, and counts it ({@value #RELOAD_FAILURES}); a typo must not lock every node out.
 */
public final class Credentials {
    private static final Logger log = LoggerFactory.getLogger(Credentials.class);
    public static final String RELOAD_FAILURES = "rulesync.api.credentials.reload.failures";

    /** What the files held when last read. */
    private record Loaded(ApiTokens tokens, NodeIssuers issuers, List<byte[]> contents) {}

    /** The caller a credential proves, or why it proves none (for the log and the failure counter). */
    public record Result(ApiTokens.Caller caller, String failure) {
        public Optional<ApiTokens.Caller> found() {
            return Optional.ofNullable(caller);
        }
    }

    private final Path tokensFile;
    private final List<String> inline;
    private final Path issuersFile;
    private final Clock clock;
    private final Counter reloadFailures;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    /**
     * Node tokens verified lately: a REST agent sends its token on every request, and verifying one costs 60 µs (RS256;
     * ES256 about 0.9 ms on JDK 17; see BENCHMARKS.md). Emptied whenever the credentials change; a hit still checks expiry.
     */
    private final Cache<String, ApiTokens.Caller> verified = Caffeine.newBuilder()
            .maximumSize(100_000)
            .expireAfterWrite(Duration.ofMinutes(1))
            .build();

    private volatile Loaded loaded;
    private volatile String lastFailure;

    /**
     * Reads the files; throws {@link IllegalArgumentException} or {@link IOException} when they are not valid: the api
     * does not start on credentials it cannot read.
     */
    public Credentials(Path tokensFile, List<String> inline, Path issuersFile, Clock clock, MeterRegistry meters)
            throws IOException {
        this.tokensFile = tokensFile;
        this.inline = List.copyOf(inline);
        this.issuersFile = issuersFile;
        this.clock = clock;
        this.reloadFailures = Counter.builder(RELOAD_FAILURES)
                .description("credential files that changed but could not be read")
                .register(meters);
        this.loaded = load();
    }

    /** Credentials of api tokens only (tests). */
    public static Credentials of(ApiTokens tokens) {
        try {
            return new Credentials(tokens);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private Credentials(ApiTokens tokens) throws IOException {
        this.tokensFile = null;
        this.inline = List.of();
        this.issuersFile = null;
        this.clock = Clock.systemUTC();
        this.reloadFailures = null;
        this.loaded = new Loaded(tokens, NodeIssuers.NONE, List.of());
    }

    public ApiTokens tokens() {
        return loaded.tokens();
    }

    /** Whose credential this is, by the api's clock. */
    public Result authenticate(String bearer) {
        Loaded l = loaded;
        if (NodeIssuers.looksLikeJwt(bearer)) {
            if (l.issuers().isEmpty()) {
                return new Result(null, "a JWT, and no node issuers are configured");
            }
            ApiTokens.Caller cached = verified.getIfPresent(bearer);
            if (cached != null && clock.instant().isBefore(cached.expires())) {
                return new Result(cached, null);
            }
            NodeIssuers.Verified v = l.issuers().verify(bearer, clock);
            if (v.caller() != null) {
                verified.put(bearer, v.caller());
            }
            return new Result(v.caller(), v.failure());
        }
        return l.tokens().authenticate(bearer).map(c -> new Result(c, null)).orElse(new Result(null, "unknown token"));
    }

    /** Runs {@code listener} after every change taken. */
    public void onChange(Runnable listener) {
        listeners.add(listener);
    }

    /**
     * Reads the files again; takes them if they changed and are valid. Returns whether anything changed. One reload at a
     * time: the api's two-second reload and an explicit one could otherwise finish out of order, and the older read
     * would undo the newer until the next tick.
     */
    public synchronized boolean reload() {
        if (tokensFile == null && issuersFile == null) {
            return false;
        }
        Loaded old = loaded;
        try {
            if (same(old.contents(), contents(old))) {
                return false;
            }
            loaded = load();
            verified.invalidateAll();
            lastFailure = null;
        } catch (IOException | RuntimeException e) {
            String why = e.getMessage();
            if (!why.equals(lastFailure)) {
                log.error("credentials changed but cannot be read; keeping the ones read before: {}", why);
                lastFailure = why;
                reloadFailures.increment();
            }
            return false;
        }
        log.info(
                "credentials read again: {} api tokens, node issuers for {} clusters",
                loaded.tokens().size(),
                loaded.issuers().size());
        listeners.forEach(Runnable::run);
        return true;
    }

    private Loaded load() throws IOException {
        List<String> lines = new ArrayList<>();
        String source = "rulesync.api.tokens";
        if (tokensFile != null) {
            lines.addAll(Files.readAllLines(tokensFile));
            source = tokensFile + (inline.isEmpty() ? "" : " and rulesync.api.tokens");
        }
        lines.addAll(inline);
        ApiTokens tokens = ApiTokens.parse(lines, source);
        NodeIssuers issuers = issuersFile == null ? NodeIssuers.NONE : NodeIssuers.read(issuersFile);
        Loaded partial = new Loaded(tokens, issuers, List.of());
        return new Loaded(tokens, issuers, contents(partial));
    }

    /** The bytes of every file the credentials came from, in a fixed order. */
    private List<byte[]> contents(Loaded l) throws IOException {
        List<byte[]> out = new ArrayList<>();
        if (tokensFile != null) {
            out.add(Files.readAllBytes(tokensFile));
        }
        if (issuersFile != null) {
            // The issuers file first: a new line in it names a JWKS file the old list did not have.
            out.add(Files.readAllBytes(issuersFile));
            for (Path p : l.issuers().files()) {
                if (!p.equals(issuersFile)) {
                    out.add(Files.readAllBytes(p));
                }
            }
        }
        return out;
    }

    private static boolean same(List<byte[]> a, List<byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }
}
