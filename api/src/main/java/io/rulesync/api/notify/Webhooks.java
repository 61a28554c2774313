package io.rulesync.api.notify;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.process.Retries;
import io.rulesync.store.NotificationStore;
import io.rulesync.store.NotificationStore.Notification;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells webhook receivers what the {@code notification} table holds, in order, each at least once: a rollout started,
 * halted, rolled back or completed, a node failing a version, objects refused. One sender per destination at a time
 * across replicas (its cursor row is locked while it sends). A delivery that fails is tried again after a jittered
 * backoff, the later notifications waiting behind it; after {@link #ATTEMPTS} attempts it is given up, recorded for the
 * audit ({@code GET /api/v1/audit}) and logged, and the next one goes.
 */
public final class Webhooks implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Webhooks.class);
    /** Attempts per notification: about half a minute of backoff (1, 2, 4, 8 s, each ±50 %) before it is given up. */
    public static final int ATTEMPTS = 5;

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** Notifications are kept this long, sent or not. */
    private static final Duration KEPT = Duration.ofDays(7);

    /** A receiver: its URL (never logged or stored whole: chat webhooks carry their secret in the path). */
    private static final class Destination {
        final URI url;
        final String key;
        final String shown;
        /** The failures of the notification at the head of this receiver's queue, and the wait before the next attempt. */
        final Retries retries = new Retries(Duration.ofSeconds(1), Duration.ofSeconds(30), false);

        Instant next = Instant.EPOCH;

        Destination(URI url) {
            this.url = url;
            this.key = "sha256:" + sha256(url.toString()).substring(0, 32);
            this.shown =
                    url.getScheme() + "://" + url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort()) + "/…";
        }
    }

    private final NotificationStore store;
    private final List<Destination> destinations = new ArrayList<>();
    private final byte[] secret;
    private final HttpClient http;
    private final Clock clock;
    private final Counter delivered;
    private final Counter givenUp;
    private ScheduledExecutorService thread;
    private Instant nextPrune = Instant.EPOCH;

    /**
     * @param urls where to send: https, or http to a loopback address only (a notification names clusters, nodes and
     *     their errors)
     * @param secret the shared secret of the signature header (null: unsigned)
     */
    public Webhooks(NotificationStore store, List<String> urls, byte[] secret, Clock clock, MeterRegistry meters) {
        this.store = store;
        for (String u : urls) {
            destinations.add(new Destination(checked(u)));
        }
        this.secret = secret == null ? null : secret.clone();
        this.http = HttpClient.newBuilder()
                .connectTimeout(TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        this.clock = clock;
        this.delivered = Counter.builder("rulesync.webhooks.delivered")
                .description("notifications a webhook receiver accepted")
                .register(meters);
        this.givenUp = Counter.builder("rulesync.webhooks.failed")
                .description("notifications given up after their attempts, recorded in the audit")
                .register(meters);
    }

    /** A webhook URL, or why it is refused (naming the URL without its path). */
    public static URI checked(String url) {
        URI u;
        try {
            u = URI.create(url.strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("webhook '" + url + "' is not a URL: " + e.getMessage());
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (u.getHost() == null || !(scheme.equals("https") || scheme.equals("http"))) {
            throw new IllegalArgumentException(
                    "webhook '" + scheme + "://" + u.getHost() + "/…' is not an http(s) URL with a host");
        }
        if (scheme.equals("http") && !loopback(u.getHost())) {
            throw new IllegalArgumentException(
                    "webhook 'http://" + u.getHost() + "/…' would send notifications in clear text: "
                            + "use https (plain http is taken for loopback addresses only)");
        }
        return u;
    }

    /** Starts sending (a thread of its own, once a second); without destinations it only prunes old notifications. */
    public synchronized void start() {
        for (Destination d : destinations) {
            store.register(d.key);
            log.info(
                    "webhooks: telling {} about rollouts, failing nodes and refused objects{}",
                    d.shown,
                    secret == null ? " (unsigned: no --webhook-secret-file)" : "");
        }
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "webhooks");
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(this::roundSafely, 1, 1, TimeUnit.SECONDS);
    }

    private void roundSafely() {
        try {
            round();
        } catch (RuntimeException e) {
            log.warn("webhooks: {} (trying again in a second)", e.getMessage());
        }
    }

    /** One round: each destination whose backoff is over is sent what is new. */
    void round() {
        Instant now = clock.instant();
        for (Destination d : destinations) {
            if (!now.isBefore(d.next)) {
                store.sendNext(d.key, 20, rows -> send(d, rows));
            }
        }
        if (!now.isBefore(nextPrune)) {
            // Housekeeping: due again in an hour whether or not it worked now (a database that is down is not asked
            // again, and said so, every second).
            nextPrune = now.plus(Duration.ofHours(1));
            store.prune(now.minus(KEPT));
        }
    }

    private int send(Destination d, List<Notification> rows) {
        int done = 0;
        for (Notification n : rows) {
            String error = post(d, n);
            if (error == null) {
                delivered.increment();
            } else {
                Duration wait = d.retries.failed();
                int attempts = d.retries.failures();
                if (attempts < ATTEMPTS) {
                    d.next = clock.instant().plus(wait);
                    log.info(
                            "webhooks: {} did not take notification {} ({}), attempt {} of {}; again in {} ms",
                            d.shown,
                            n.id(),
                            error,
                            attempts,
                            ATTEMPTS,
                            wait.toMillis());
                    return done;
                }
                store.failed(n, d.shown, attempts, error, clock.instant());
                givenUp.increment();
                log.warn(
                        "webhooks: gave up telling {} about notification {} ({} of {}) after {} attempts: {}",
                        d.shown,
                        n.id(),
                        n.kind(),
                        n.cluster(),
                        attempts,
                        error);
            }
            d.retries.succeeded(); // the next notification starts afresh
            done++;
        }
        return done;
    }

    /** Null when the receiver took it (any 2xx); otherwise what went wrong. */
    private String post(Destination d, Notification n) {
        String body = WebhookMessage.body(n);
        HttpRequest.Builder r = HttpRequest.newBuilder(d.url)
                .timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .header("User-Agent", "rulesync")
                .header(WebhookMessage.DELIVERY, Long.toString(n.id()))
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (secret != null) {
            r.header(
                    WebhookMessage.SIGNATURE,
                    WebhookMessage.signature(secret, clock.instant().getEpochSecond(), body));
        }
        try {
            HttpResponse<String> answer = http.send(r.build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() / 100 == 2) {
                return null;
            }
            String said = answer.body() == null ? "" : answer.body().strip();
            return "HTTP " + answer.statusCode()
                    + (said.isEmpty() ? "" : ": " + said.substring(0, Math.min(200, said.length())));
        } catch (IOException e) {
            return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    @Override
    public synchronized void close() {
        if (thread != null) {
            thread.shutdownNow();
        }
    }

    private static boolean loopback(String host) {
        try {
            return host.equalsIgnoreCase("localhost")
                    || InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
