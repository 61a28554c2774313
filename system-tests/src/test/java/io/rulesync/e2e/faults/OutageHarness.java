package io.rulesync.e2e.faults;

import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.model.topic.Topics;
import io.rulesync.testsupport.PrivatePostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Faults: the Kafka broker stopped (SIGTERM) or killed (SIGKILL) and started again on the same port and log directory,
 * and PostgreSQL unreachable for 30 s and back, each ROUNDS times, while a steady stream of changes arrives (results:
 * RELIABILITY.md). Everything runs as it is deployed, each a process of its own: the broker, a PostgreSQL server of the
 * harness's own (never the shared one), the compiler, the api and one dry-run agent per node of the cluster; the
 * changes come through the watcher's real sink.
 *
 * <p>During each database outage the api must fail fast and say so: readiness DOWN (503) and a read answered with a
 * 503 problem, each within 5 s, not a 500 or a hang; after it, the api and the compiler recover by themselves. At the
 * end, nothing may be lost ({@link PipelineChecks}), and every agent must run the newest version.
 * Usage: {@code faults/outages [ROUNDS SERVICES RATE]} (default 5 200 20).
 */
public final class OutageHarness {
    private static final String CLUSTER = "faults";
    private static final Duration DB_DOWN = Duration.ofSeconds(30);
    private static final Duration FAST = Duration.ofSeconds(5);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private OutageHarness() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int services = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        Path jar = CompilerKillHarness.jar();
        List<String> failures = new ArrayList<>();
        List<RulesyncProcess> processes = new ArrayList<>();
        DryRunAgents agents = null;
        try (PrivatePostgres pg = PrivatePostgres.create();
                BrokerProcess broker = BrokerProcess.start()) {
            String url = pg.url("postgres");
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(url);
            ds.setUser("postgres");
            ds.setConnectTimeout(2);
            PipelineChecks checks = new PipelineChecks(CLUSTER, ds);
            System.out.printf(
                    "outages: %d rounds of broker restart and 30 s of PostgreSQL down; %d Services x %d endpoints over "
                            + "%d nodes, %d changes/s%n",
                    rounds, services, ChangeStream.ENDPOINTS, ChangeStream.NODES, rate);

            RulesyncProcess compiler =
                    CompilerKillHarness.compiler(jar, broker.bootstrap(), url, "postgres", List.of());
            processes.add(compiler);
            compiler.awaitHealthy(Duration.ofSeconds(120));
            int apiPort = RulesyncProcess.freePort();
            ApiTokens.Issued viewer = ApiTokens.issue("vera", Role.VIEWER);
            Path dir = Files.createDirectories(Path.of("target", "faults-outages"));
            Path tokens = dir.resolve("tokens");
            List<String> lines = new ArrayList<>(DryRunAgents.tokenLines(CLUSTER, ChangeStream.NODES));
            lines.add(viewer.line());
            Files.write(tokens, lines);
            String api = "http://127.0.0.1:" + apiPort;
            RulesyncProcess apiProcess = RulesyncProcess.start(
                    "api",
                    jar,
                    List.of("-Xmx512m"),
                    List.of(
                            "api",
                            "--port",
                            Integer.toString(apiPort),
                            "--address",
                            "127.0.0.1",
                            "--db-url",
                            url,
                            "--db-user",
                            "postgres",
                            "--tokens-file",
                            tokens.toString()),
                    api + "/actuator/health/readiness");
            processes.add(apiProcess);
            apiProcess.awaitHealthy(Duration.ofSeconds(120));

            ChangeStream stream =
                    new ChangeStream(CLUSTER, broker.bootstrap(), Topics.DEFAULT.events(), services, rate);
            stream.start();
            Eventually.require("the first version", Duration.ofSeconds(120), () -> checks.head() > 0);
            agents = DryRunAgents.start(jar, CLUSTER, ChangeStream.NODES, broker.bootstrap(), api, dir);

            List<Long> brokerBack = new ArrayList<>();
            List<Long> dbBack = new ArrayList<>();
            List<Long> apiBack = new ArrayList<>();
            List<Long> failFast = new ArrayList<>();
            for (int r = 1; r <= rounds; r++) {
                Thread.sleep(5_000);
                // The broker: an operator's restart in odd rounds, a crash in even ones; down for 5 s.
                boolean crash = r % 2 == 0;
                if (crash) {
                    broker.kill();
                } else {
                    broker.stop();
                }
                Thread.sleep(5_000);
                broker.start(Duration.ofSeconds(60));
                long t0 = System.nanoTime();
                long before = checks.committed(); // nothing was fetched while the broker was down
                Eventually.require(
                        "the compiler committing again after the broker's " + (crash ? "crash" : "restart"),
                        Duration.ofMinutes(3),
                        () -> checks.committed() > before);
                brokerBack.add(ms(t0));

                Thread.sleep(5_000);
                // PostgreSQL: down for 30 s (pg_ctl stop -m fast: connections closed, as in a failover).
                pg.stop();
                long down = System.nanoTime();
                Thread.sleep(2_000);
                failFast.addAll(duringOutage(api, viewer.token(), failures, r));
                Thread.sleep(Math.max(0, DB_DOWN.toMillis() - ms(down)));
                pg.start();
                long t1 = System.nanoTime();
                long beforeDb = checks.committed(); // nothing was stored while the database was down
                Eventually.require(
                        "the api ready again",
                        Duration.ofMinutes(1),
                        () -> status(api + "/actuator/health/readiness", null) == 200);
                apiBack.add(ms(t1));
                Eventually.require(
                        "the compiler committing again after the database came back",
                        Duration.ofMinutes(3),
                        () -> checks.committed() > beforeDb);
                dbBack.add(ms(t1));
                for (RulesyncProcess p : processes) {
                    if (!p.alive()) {
                        failures.add(
                                "round " + r + ": " + p.name() + " exited (see target/faults-" + p.name() + ".log)");
                    }
                }
                for (String exited : agents.exited()) {
                    failures.add("round " + r + ": " + exited);
                }
                System.out.printf(
                        "  round %d: broker %s, back in %.1f s; database down 30 s, api ready again %.1f s and the compiler "
                                + "committing %.1f s after; %,d events sent%n",
                        r,
                        crash ? "killed" : "stopped",
                        brokerBack.get(r - 1) / 1000.0,
                        apiBack.get(r - 1) / 1000.0,
                        dbBack.get(r - 1) / 1000.0,
                        stream.delivered().size());
            }
            stream.stop();
            checks.awaitStored(stream.delivered().size(), Duration.ofMinutes(3));
            long head = checks.head();
            JdbcTemplate sql = new JdbcTemplate(ds);
            boolean converged = agents.awaitAll(sql, head, Duration.ofMinutes(2));
            Map<String, Long> running = agents.running(sql);
            if (!converged) {
                failures.add("agents: not every node runs version " + head + ": " + running);
            }
            failures.addAll(checks.failures(stream));
            System.out.printf("broker back to the compiler committing: %s ms%n", brokerBack);
            System.out.printf(
                    "database down 30 s: api answers while down (ms): %s; ready again after: %s ms; compiler committing "
                            + "after: %s ms%n",
                    failFast, apiBack, dbBack);
            System.out.printf(
                    "events: %,d delivered, %,d stored (%d sends retried by the sink); versions: 1..%,d; agents run: %s%n",
                    stream.delivered().size(), checks.stored(), stream.retried(), head, running);
            System.out.printf(
                    "rules of the newest version equal the compile of the final objects: %s%n",
                    checks.newestRulesMatch(stream));
        } finally {
            if (agents != null) {
                agents.close();
            }
            for (RulesyncProcess p : processes) {
                p.stop();
            }
        }
        System.out.println(
                failures.isEmpty() ? "RESULT: nothing lost" : "RESULT: FAILED: " + String.join("; ", failures));
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    /**
     * The api while the database is down: readiness DOWN and a read answered with a 503 problem, each within {@link #FAST}.
     * Returns how long each took, in ms.
     */
    private static List<Long> duringOutage(String api, String token, List<String> failures, int round)
            throws Exception {
        List<Long> took = new ArrayList<>();
        for (String[] probe : Arrays.asList(
                new String[] {"/actuator/health/readiness", null},
                new String[] {"/api/v1/clusters/" + CLUSTER + "/versions", token})) {
            long t = System.nanoTime();
            HttpResponse<String> r;
            try {
                r = get(api + probe[0], probe[1], FAST.plusSeconds(25));
            } catch (java.net.http.HttpTimeoutException e) {
                failures.add("round " + round + ": GET " + probe[0] + " hung while the database was down");
                continue;
            }
            long ms = ms(t);
            took.add(ms);
            boolean problem = probe[1] == null
                    || r.headers().firstValue("Content-Type").orElse("").startsWith("application/problem+json");
            if (r.statusCode() != 503 || !problem || ms > FAST.toMillis()) {
                failures.add("round " + round + ": GET " + probe[0] + " answered " + r.statusCode() + " in " + ms
                        + " ms while the " + "database was down: " + r.body());
            }
        }
        return took;
    }

    private static HttpResponse<String> get(String url, String token, Duration timeout) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(timeout);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int status(String url, String token) {
        try {
            return get(url, token, Duration.ofSeconds(5)).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    private static long ms(long since) {
        return (System.nanoTime() - since) / 1_000_000;
    }
}
