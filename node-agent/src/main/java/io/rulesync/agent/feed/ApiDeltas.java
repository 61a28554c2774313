package io.rulesync.agent.feed;

import io.rulesync.client.ApiClient;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.process.Retries;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodySubscribers;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One cluster's deltas from the api's watch, {@code GET /api/v1/clusters/{c}/deltas?after=V&watch=true}: the node needs
 * no Kafka credentials, and its token reads only its own cluster. The api writes each new version as a line of the
 * open answer, and ends it after {@code hold}; then the next request asks for what follows the version the agent runs
 * (or the last delta handed over, if later): so nothing is missed between a snapshot and the first delta, and a version
 * the agent refused is not asked for again.
 *
 * <p>Lines arrive on the HTTP client's threads and are queued; {@link #poll} takes what has come, waiting at most its
 * {@code wait}, so the agent's loop keeps its beat (retries, drift checks) and applies a burst together.
 */
public final class ApiDeltas implements DeltaSource {
    private static final Logger log = LoggerFactory.getLogger(ApiDeltas.class);
    /** How long one watch answer stays open: below common idle timeouts of proxies (30-60 s). */
    public static final Duration DEFAULT_HOLD = Duration.ofSeconds(25);

    /** What the current answer has brought: a line, or its end (with the status and, for an error, the body). */
    private sealed interface Arrival {}

    private record Line(String text) implements Arrival {}

    private record End(int status, String body, Throwable failure) implements Arrival {}

    private final ApiClient api;
    private final String cluster;
    private final String node;
    private final LongSupplier running;
    private final Supplier<String> runningLineage;
    private final Duration hold;
    private final Clock clock;
    private final LinkedBlockingQueue<Arrival> arrivals = new LinkedBlockingQueue<>();
    private CompletableFuture<HttpResponse<String>> inFlight;
    private HttpRequest inFlightRequest;
    private long delivered = -1;
    private String deliveredLineage = Lineage.UNKNOWN;
    private Instant retryAt = Instant.MIN;
    private final Retries retry = Retries.forRequests();

    /**
     * @param running        the version the agent runs (-1: none yet, nothing is asked then)
     * @param runningLineage that version's lineage, sent along so that the api can tell a version of another history
     * @param hold           how long the api keeps one answer open
     */
    public ApiDeltas(
            ApiClient api,
            String cluster,
            String node,
            LongSupplier running,
            Supplier<String> runningLineage,
            Duration hold,
            Clock clock) {
        this.api = api;
        this.cluster = cluster;
        this.node = node;
        this.running = running;
        this.runningLineage = runningLineage;
        this.hold = hold;
        this.clock = clock;
    }

    @Override
    public void start(Duration timeout) {
        log.atInfo().addKeyValue("cluster", cluster).log("watching deltas of cluster {} through the api", cluster);
    }

    @Override
    public Polled poll(Duration wait) {
        if (inFlight == null && !send()) {
            pause(wait);
            return Polled.NOTHING;
        }
        Arrival first;
        try {
            first = arrivals.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Polled.NOTHING;
        }
        if (first == null) {
            return Polled.NOTHING;
        }
        List<Arrival> batch = new ArrayList<>(List.of(first));
        arrivals.drainTo(batch);
        List<RulesDelta> deltas = new ArrayList<>();
        String gap = null;
        for (Arrival a : batch) {
            if (a instanceof Line l) {
                read(l.text(), deltas);
            } else if (a instanceof End e) {
                inFlight = null;
                gap = ended(e);
            }
        }
        return deltas.isEmpty() && gap == null ? Polled.NOTHING : new Polled(deltas, gap);
    }

    /** Sends the next request; false when there is nothing to ask yet (no version, or backing off). */
    private boolean send() {
        long runs = running.getAsLong();
        long after = Math.max(runs, delivered);
        if (after < 1 || clock.instant().isBefore(retryAt)) {
            return false;
        }
        String lineage = after == runs ? runningLineage.get() : deliveredLineage;
        HttpRequest req = api.clusterRequest(
                        cluster,
                        "deltas?after=" + after + (lineage.isEmpty() ? "" : "&lineage=" + lineage) + "&node="
                                + ApiClient.encode(node) + "&watch=true&wait=" + hold.toSeconds(),
                        hold.plusSeconds(15))
                .header("Accept", "application/x-ndjson")
                .GET()
                .build();
        inFlightRequest = req;
        // A 200 streams its lines into the queue as they come; any other status is read whole, for its message.
        CompletableFuture<HttpResponse<String>> exchange = api.http()
                .sendAsync(
                        req,
                        info -> info.statusCode() == 200
                                ? BodySubscribers.fromLineSubscriber(
                                        new Lines(), s -> (String) null, StandardCharsets.UTF_8, null)
                                : BodySubscribers.ofString(StandardCharsets.UTF_8));
        exchange.whenComplete((resp, failure) -> arrivals.add(
                resp == null ? new End(0, null, failure) : new End(resp.statusCode(), resp.body(), failure)));
        inFlight = exchange; // the exchange itself, so that close() cancels the open answer, not a stage after it
        return true;
    }

    /** Puts each line of a streamed answer in the queue, on the HTTP client's thread. */
    private final class Lines implements Flow.Subscriber<String> {
        @Override
        public void onSubscribe(Flow.Subscription s) {
            s.request(Long.MAX_VALUE); // deltas are small; an agent busy applying takes them all at its next poll
        }

        @Override
        public void onNext(String line) {
            if (!line.isBlank()) {
                arrivals.add(new Line(line));
            }
        }

        @Override
        public void onError(Throwable t) {
            // the response's future fails too, and says it
        }

        @Override
        public void onComplete() {}
    }

    /** The answer ended: null when it just ran its time, else a gap to close with a snapshot (410) or nothing (a failure). */
    private String ended(End e) {
        String where = "GET " + inFlightRequest.uri();
        if (e.failure() != null) {
            failed(where + ": "
                    + (e.failure().getCause() == null
                            ? e.failure()
                            : e.failure().getCause()));
            return null;
        }
        if (e.status() == 200) {
            retry.succeeded();
            return null;
        }
        String problem = where + ": HTTP " + e.status() + " " + ApiClient.abbreviate(e.body());
        if (e.status() == 410) {
            // The agent loads a snapshot; asked again too soon, the same answer would come back while it cannot. What
            // was
            // handed over may not follow any more (another history): the next request goes on from what the agent runs.
            retryAt = clock.instant().plusSeconds(1);
            delivered = -1;
            deliveredLineage = Lineage.UNKNOWN;
            return problem;
        }
        failed(problem);
        return null;
    }

    private void read(String line, List<RulesDelta> out) {
        try {
            RulesDelta d = RulesDelta.fromJson(line);
            if (!d.cluster().equals(cluster)) {
                throw new IllegalArgumentException("a delta of cluster " + d.cluster());
            }
            out.add(d);
            if (d.target() > delivered) {
                delivered = d.target();
                deliveredLineage = d.lineage();
            }
        } catch (RuntimeException e) {
            // A delta the agent cannot read is a gap: the next readable one asks for a snapshot.
            log.atWarn()
                    .addKeyValue("cluster", cluster)
                    .log("skipping an unreadable delta from {}: {}", inFlightRequest.uri(), e.getMessage());
        }
    }

    /** The api could not be asked: asked again as {@link Retries#forRequests} says, said when there is a wait. */
    private void failed(String problem) {
        Duration wait = retry.failed();
        if (wait.isZero()) {
            return;
        }
        retryAt = clock.instant().plus(wait);
        log.atWarn()
                .addKeyValue("cluster", cluster)
                .log("reading deltas: {}; asking again in {} s", problem, wait.toSeconds());
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
