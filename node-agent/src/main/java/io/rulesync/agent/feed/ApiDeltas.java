package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesDelta;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One cluster's deltas from the api's long poll, {@code GET /api/v1/clusters/{c}/deltas?after=V}: the node needs no
 * Kafka credentials, and its token reads only its own cluster. One request is in flight at a time, asking for what
 * follows the version the agent runs (or the last delta handed over, if later): so nothing is missed between a
 * snapshot and the first delta, and a version the agent refused is not asked for again.
 *
 * <p>The request is sent asynchronously and {@link #poll} waits for it at most its {@code wait}, so the agent's loop
 * keeps its beat (retries, drift checks) while the api holds the request until there is news.
 */
public final class ApiDeltas implements DeltaSource {
    private static final Logger log = LoggerFactory.getLogger(ApiDeltas.class);
    /** How long the api holds a poll with nothing new: below common idle timeouts of proxies (30-60 s). */
    public static final Duration DEFAULT_HOLD = Duration.ofSeconds(25);

    private final ApiConnection api;
    private final String cluster;
    private final String node;
    private final LongSupplier running;
    private final Duration hold;
    private final Clock clock;
    private CompletableFuture<HttpResponse<Stream<String>>> inFlight;
    private HttpRequest inFlightRequest;
    private long delivered = -1;
    private Instant retryAt = Instant.MIN;
    private final RetryDelay retry = new RetryDelay();

    /**
     * @param running the version the agent runs (-1: none yet, nothing is asked then)
     * @param hold    how long the api may hold a request when there is nothing new
     */
    public ApiDeltas(ApiConnection api, String cluster, String node, LongSupplier running, Duration hold, Clock clock) {
        this.api = api;
        this.cluster = cluster;
        this.node = node;
        this.running = running;
        this.hold = hold;
        this.clock = clock;
    }

    @Override
    public void start(Duration timeout) {
        log.atInfo().addKeyValue("cluster", cluster).log("reading deltas of cluster {} from the api", cluster);
    }

    @Override
    public Polled poll(Duration wait) {
        if (inFlight == null && !send()) {
            pause(wait);
            return Polled.NOTHING;
        }
        HttpResponse<Stream<String>> resp;
        try {
            resp = inFlight.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return Polled.NOTHING;
        } catch (ExecutionException e) {
            inFlight = null;
            return failed("GET " + inFlightRequest.uri() + ": " + (e.getCause() == null ? e : e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Polled.NOTHING;
        }
        inFlight = null;
        try (Stream<String> lines = resp.body()) {
            if (resp.statusCode() == 200) {
                retry.succeeded();
                return new Polled(read(lines), null);
            }
            String problem = "GET " + inFlightRequest.uri() + ": HTTP " + resp.statusCode() + " "
                    + ApiConnection.abbreviate(lines.collect(Collectors.joining("\n")));
            if (resp.statusCode() == 410) {
                // The agent loads a snapshot; asked again too soon, the same answer would come back while it cannot.
                retryAt = clock.instant().plusSeconds(1);
                return new Polled(List.of(), problem);
            }
            return failed(problem);
        } catch (UncheckedIOException e) {
            return failed("GET " + inFlightRequest.uri() + ": reading the answer: " + e.getMessage());
        }
    }

    /** Sends the next request; false when there is nothing to ask yet (no version, or backing off). */
    private boolean send() {
        long after = Math.max(running.getAsLong(), delivered);
        if (after < 1 || clock.instant().isBefore(retryAt)) {
            return false;
        }
        inFlightRequest = api.request(cluster, "deltas?after=" + after + "&node=" + ApiConnection.encode(node) + "&wait="
                        + hold.toSeconds(), hold.plusSeconds(15))
                .header("Accept", "application/x-ndjson").GET().build();
        inFlight = api.http().sendAsync(inFlightRequest, HttpResponse.BodyHandlers.ofLines());
        return true;
    }

    /** One delta per line, read as the lines arrive (a node far behind gets up to 100 at once). */
    private List<RulesDelta> read(Stream<String> lines) {
        List<RulesDelta> out = new ArrayList<>();
        for (String line : (Iterable<String>) lines::iterator) {
            if (line.isBlank()) {
                continue;
            }
            try {
                RulesDelta d = RulesDelta.fromJson(line);
                if (!d.cluster().equals(cluster)) {
                    throw new IllegalArgumentException("a delta of cluster " + d.cluster());
                }
                out.add(d);
                delivered = Math.max(delivered, d.target());
            } catch (RuntimeException e) {
                // A delta the agent cannot read is a gap: the next readable one asks for a snapshot.
                log.atWarn().addKeyValue("cluster", cluster).log("skipping an unreadable delta from {}: {}", inFlightRequest.uri(),
                        e.getMessage());
            }
        }
        return out;
    }

    /** The api could not be asked: asked again as {@link RetryDelay} says, said when there is a wait. */
    private Polled failed(String problem) {
        Duration wait = retry.failed();
        if (wait.isZero()) {
            return Polled.NOTHING;
        }
        retryAt = clock.instant().plus(wait);
        log.atWarn().addKeyValue("cluster", cluster).log("reading deltas: {}; asking again in {} s", problem, wait.toSeconds());
        return Polled.NOTHING;
    }

    private static void pause(Duration wait) {
        try {
            Thread.sleep(wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void wakeup() {
        // poll waits at most its own wait; nothing blocks longer
    }

    @Override
    public void close() {
        if (inFlight != null) {
            inFlight.cancel(true);
        }
    }
}
