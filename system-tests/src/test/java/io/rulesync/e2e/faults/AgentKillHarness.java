package io.rulesync.e2e.faults;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.KernelListing;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.VersionHistory;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.netns.NetnsLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import picocli.CommandLine;

/**
 * Fault: the node agent killed (SIGKILL) in the middle of applying rules to a real kernel, KILLS times, alternately during
 * a full load (the node's rules flushed, as after a reboot, and the agent started: killed while it restores the whole
 * rule set) and during an incremental apply (a steady stream of changes; killed while it restores one version's delta).
 * The agent is a process of its own ({@code rulesync.jar agent}) programming a network namespace; the compiler, the
 * api and the broker run in the harness. Killed while an {@code iptables-restore} of its runs (found among its child
 * processes), after a random 0-100 ms: half the kills take the JVM alone (its tool finishes), half every process of
 * the agent at once, the tool included, as a container's kill. After each kill, before the agent runs again, the kernel
 * is read ({@code iptables -S}) and must hold no rule twice in any chain, the built-in ones included (no jump
 * duplicated); killed during an incremental
 * apply, each table must hold exactly the rules of one version, the same version for both tables: an incremental apply is
 * never half visible (a full load is written in several restores, so killed during one the kernel may hold part of it).
 * Then the agent starts again, and must acknowledge the newest version and hold exactly its rules. Results: RELIABILITY.md.
 * Needs root and network namespaces. Usage: {@code faults/agent-kill [KILLS SERVICES RATE]} (default 40 1000 5).
 */
public final class AgentKillHarness {
    private static final String CLUSTER = "faults";
    private static final String NODE = "node-0";
    private static final Duration CONVERGE = Duration.ofSeconds(90);

    private AgentKillHarness() {}

    public static void main(String[] args) throws Exception {
        int kills = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        int services = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        Optional<String> unavailable = NetnsLab.unavailableReason();
        if (unavailable.isPresent()) {
            System.out.println("RESULT: not run: " + unavailable.get());
            System.exit(2);
        }
        Path jar = CompilerKillHarness.jar();
        List<String> failures = new ArrayList<>();
        String run = UUID.randomUUID().toString().substring(0, 8);
        Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
        List<AutoCloseable> close = new ArrayList<>();
        RulesyncProcess agent = null;
        try (TestDatabase db = TestDatabase.create();
                NetnsLab lab = new NetnsLab(0)) {
            ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run);
            close.add(compiler::close);
            // The node's own token: it acks for itself only.
            ApiTokens.Issued agentToken =
                    ApiTokens.issue("agent-" + NODE, Role.AGENT, new ApiTokens.Scope(CLUSTER, NODE));
            ApiCommand apiCommand = new ApiCommand().withTokens(List.of(agentToken.line()));
            new CommandLine(apiCommand)
                    .parseArgs("--port=0", "--address=127.0.0.1", "--db-url=" + db.url(), "--db-user=" + db.user());
            apiCommand.withDatabasePassword(db.password());
            ConfigurableApplicationContext api = apiCommand.start();
            close.add(api::close);
            String apiUrl = "http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port");
            Path dir = Files.createDirectories(Path.of("target", "faults-agent-kill"));
            Path token = dir.resolve("agent-token");
            Files.writeString(token, agentToken.token() + "\n");
            Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
            Path state = Files.createDirectories(dir.resolve("state-" + run));
            List<String> agentArgs = List.of(
                    "agent",
                    "--cluster",
                    CLUSTER,
                    "--node",
                    NODE,
                    "--kafka",
                    TestInfrastructure.kafkaBootstrapServers(),
                    "--deltas-topic",
                    topics.deltas(),
                    "--api",
                    apiUrl,
                    "--api-token-file",
                    token.toString(),
                    "--netns",
                    lab.nodeNs(),
                    "--state-dir",
                    state.toString(),
                    "--ip-families",
                    "ipv4",
                    "--metrics-bind-address",
                    "off",
                    "--healthz-bind-address",
                    "off",
                    "--verify-interval",
                    "5");

            ChangeStream stream = new ChangeStream(
                    CLUSTER, TestInfrastructure.kafkaBootstrapServers(), topics.events(), services, rate);
            stream.start();
            VersionHistory history = new VersionHistory(db.dataSource());
            JdbcTemplate sql = new JdbcTemplate(db.dataSource());
            Eventually.require(
                    "the initial state stored",
                    Duration.ofMinutes(2),
                    () -> history.head(CLUSTER) > 0
                            && history.nodes(CLUSTER, history.head(CLUSTER)).size() == ChangeStream.NODES
                            && history.rules(CLUSTER, history.head(CLUSTER))
                                            .fragments()
                                            .size()
                                    > services);
            System.out.printf(
                    "agent killed %d times mid-apply (half during a full load, half during an incremental apply); %d Services x "
                            + "%d endpoints, %d changes/s; kernel: network namespace %s%n",
                    kills, services, ChangeStream.ENDPOINTS, rate, lab.nodeNs());

            Random random = new Random(kills);
            Map<String, Integer> outcomes = new TreeMap<>();
            List<Long> recoveries = new ArrayList<>();
            for (int k = 0; k < kills; k++) {
                boolean full = k % 2 == 0;
                if (full) {
                    if (agent != null) {
                        agent.kill();
                    }
                    // A reboot: the kernel's rules are gone, the agent's state directory stays.
                    lab.exec(lab.nodeNs(), "nft", "flush", "ruleset").orThrow();
                    agent = RulesyncProcess.start("agent", jar, List.of("-Xmx512m"), agentArgs, null);
                } else if (agent == null || !agent.alive()) {
                    throw new IllegalStateException("the agent is not running before an incremental kill");
                }
                long headBefore = history.head(CLUSTER);
                long runningBefore = running(sql);
                if (!awaitRestore(agent, Duration.ofMinutes(2))) {
                    failures.add("kill " + (k + 1) + ": the agent ran no iptables-restore within 2 minutes");
                    continue;
                }
                Thread.sleep(random.nextInt(100));
                // Odd kills take the JVM alone (its iptables-restore finishes on its own), even ones every process of
                // the
                // agent at once, as a container's kill: the tool dies mid-restore too.
                if (k % 4 < 2) {
                    agent.kill();
                } else {
                    agent.killAll();
                }
                long headAfter = history.head(CLUSTER);

                Map<Table, Map<String, List<String>>> kernel = kernel(lab);
                String doubled = doubled(lab);
                String verdict = doubled != null
                        ? doubled
                        : judge(kernel, history, Math.max(1, Math.min(runningBefore, headBefore)), headAfter, full);
                outcomes.merge(
                        (full ? "full load: " : "incremental: ") + verdict.replaceAll(" \\d+.*", ""), 1, Integer::sum);
                if (verdict.startsWith("FAILED")) {
                    failures.add("kill " + (k + 1) + " (" + (full ? "full load" : "incremental") + "): " + verdict);
                }

                long t = System.nanoTime();
                agent = RulesyncProcess.start("agent", jar, List.of("-Xmx512m"), agentArgs, null);
                long target = history.head(CLUSTER);
                if (!Eventually.within(CONVERGE, () -> running(sql) >= target)) {
                    failures.add("kill " + (k + 1) + ": restarted, the agent did not acknowledge version " + target
                            + " within " + CONVERGE + " (it runs " + running(sql) + ")");
                } else {
                    recoveries.add((System.nanoTime() - t) / 1_000_000);
                    // Converged means the kernel holds exactly a version, not just that the agent says so.
                    String now = oneVersion(kernel(lab), history, target, history.head(CLUSTER));
                    if (now.startsWith("FAILED")) {
                        failures.add("kill " + (k + 1) + ": restarted and acknowledged, but " + now);
                    }
                }
                if ((k + 1) % 10 == 0) {
                    System.out.printf("  %d kills: %s%n", k + 1, outcomes);
                }
            }
            stream.stop();
            // The end: the stream stopped, the agent acknowledges the head, and its kernel holds exactly the head's
            // rules.
            new PipelineChecks(CLUSTER, db.dataSource())
                    .awaitStored(stream.delivered().size(), Duration.ofMinutes(1));
            long head = history.head(CLUSTER);
            long finalHead = head;
            if (!Eventually.within(CONVERGE, () -> running(sql) == finalHead)) {
                failures.add("end: the agent runs version " + running(sql) + ", not the newest " + head);
            } else if (!matches(kernel(lab), expected(history, head))) {
                Map<Table, Map<String, List<String>>> k = kernel(lab);
                failures.add("end: the kernel does not hold exactly the rules of version " + head + ": filter: "
                        + difference(
                                k.get(Table.FILTER), expected(history, head).get(Table.FILTER)) + "; nat: "
                        + difference(k.get(Table.NAT), expected(history, head).get(Table.NAT)));
            }
            agent.stop();
            agent = null;
            long[] r = recoveries.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf("kills: %s%n", outcomes);
            if (r.length > 0) {
                System.out.printf(
                        "restarted agent to the newest version acknowledged: median %.1f s, max %.1f s%n",
                        r[r.length / 2] / 1000.0, r[r.length - 1] / 1000.0);
            }
            System.out.printf(
                    "end: version %d, the agent runs %d; %,d events sent%n",
                    head, running(sql), stream.delivered().size());
        } finally {
            if (agent != null) {
                agent.kill();
            }
            for (int i = close.size() - 1; i >= 0; i--) {
                close.get(i).close();
            }
        }
        System.out.println(
                failures.isEmpty()
                        ? "RESULT: every apply whole, no rule twice, every restart converged"
                        : "RESULT: FAILED: " + String.join("; ", failures));
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    /**
     * What the kernel holds after a kill: "nothing" (killed during a full load before anything was committed), "version N"
     * (both tables exactly that version's; the lowest of several that match), or "FAILED: ..." saying what is wrong.
     */
    private static String judge(
            Map<Table, Map<String, List<String>>> kernel, VersionHistory history, long from, long to, boolean full) {
        boolean empty = kernel.values().stream().allMatch(Map::isEmpty);
        if (empty && full) {
            return "nothing yet";
        }
        String version = oneVersion(kernel, history, from, to);
        // A full load is written in several restores (a few hundred Services each): killed between two, the kernel
        // holds
        // the first part, which the restarted agent replaces. Only an incremental apply must be all or nothing.
        return version.startsWith("FAILED") && full ? "part of a full load" : version;
    }

    /** "version N" when both tables hold exactly the rules of version N (the lowest such), else what is wrong. */
    private static String oneVersion(
            Map<Table, Map<String, List<String>>> kernel, VersionHistory history, long from, long to) {
        Set<Long> both = null;
        for (Table table : Table.values()) {
            Set<Long> matching = new TreeSet<>();
            for (long v = to; v >= from; v--) {
                if (expected(history, v).get(table).equals(kernel.get(table))) {
                    matching.add(v);
                }
            }
            if (both == null) {
                both = matching;
            } else {
                both.retainAll(matching);
            }
            if (matching.isEmpty()) {
                return "FAILED: table " + table.restoreName() + " holds the rules of no version between " + from
                        + " and " + to + " (against " + to + ": "
                        + difference(kernel.get(table), expected(history, to).get(table)) + ")";
            }
        }
        return both.isEmpty()
                ? "FAILED: the tables hold the rules of different versions (between " + from + " and " + to + ")"
                : "version " + both.iterator().next();
    }

    /** The first chain where the kernel differs from what was expected, for the report. */
    private static String difference(Map<String, List<String>> kernel, Map<String, List<String>> expected) {
        Set<String> names = new TreeSet<>(kernel.keySet());
        names.addAll(expected.keySet());
        for (String n : names) {
            if (!java.util.Objects.equals(kernel.get(n), expected.get(n))) {
                return "chain " + n + ": kernel " + kernel.get(n) + ", expected " + expected.get(n);
            }
        }
        return "none";
    }

    private static boolean matches(
            Map<Table, Map<String, List<String>>> kernel, Map<Table, Map<String, List<String>>> expected) {
        return kernel.equals(expected);
    }

    /** Each version's expected listing, for the few versions one check compares with. */
    private static final Cache<Long, Map<Table, Map<String, List<String>>>> EXPECTED =
            Caffeine.newBuilder().maximumSize(64).build();

    /** What {@code iptables -t TABLE -S} prints for the node's own chains (KUBE-*) at version {@code v}. */
    private static Map<Table, Map<String, List<String>>> expected(VersionHistory history, long v) {
        return EXPECTED.get(v, x -> {
            RuleSet rules =
                    history.rules(CLUSTER, v).ruleSet(NODE, IpFamily.IPV4).orElseThrow();
            Map<Table, Map<String, List<String>>> out = new HashMap<>();
            for (Table t : Table.values()) {
                Map<String, List<String>> chains = new TreeMap<>();
                for (Chain c : rules.chains(t)) {
                    if (c.name().startsWith("KUBE-")) {
                        chains.put(c.name(), KernelListing.of(t, IpFamily.IPV4, c));
                    }
                }
                out.put(t, chains);
            }
            return out;
        });
    }

    /**
     * A rule held twice in any chain of the node, the built-in ones included (where the jumps into the agent's chains
     * are installed): "FAILED: ..." naming it; null when none is.
     */
    private static String doubled(NetnsLab lab) {
        for (Table t : Table.values()) {
            Set<String> seen = new HashSet<>();
            for (String line : lab.exec(lab.nodeNs(), "iptables", "-w", "5", "-t", t.restoreName(), "-S")
                    .orThrow()
                    .lines()) {
                if (line.startsWith("-A ") && !seen.add(line)) {
                    return "FAILED: table " + t.restoreName() + " holds a rule twice: " + line;
                }
            }
        }
        return null;
    }

    /** The kernel's chains named KUBE-* (but the canary), as {@code iptables -t TABLE -S} prints them ({@code -N}, then each {@code -A}). */
    private static Map<Table, Map<String, List<String>>> kernel(NetnsLab lab) {
        Map<Table, Map<String, List<String>>> out = new HashMap<>();
        for (Table t : Table.values()) {
            Map<String, List<String>> chains = new TreeMap<>();
            for (String line : lab.exec(lab.nodeNs(), "iptables", "-w", "5", "-t", t.restoreName(), "-S")
                    .orThrow()
                    .lines()) {
                String[] f = line.split(" ", 3);
                // The agent's canary chain (kube-proxy's way to notice a flush) is the agent's, not a version's.
                if (f.length >= 2
                        && f[1].startsWith("KUBE-")
                        && !f[1].endsWith("-CANARY")
                        && (f[0].equals("-N") || f[0].equals("-A"))) {
                    chains.computeIfAbsent(f[1], k -> new ArrayList<>()).add(line);
                }
            }
            out.put(t, chains);
        }
        return out;
    }

    private static long running(JdbcTemplate sql) {
        return sql
                .queryForList(
                        "SELECT running FROM node_status WHERE cluster = ? AND node = ?", Long.class, CLUSTER, NODE)
                .stream()
                .findFirst()
                .orElse(0L);
    }

    /** Waits until one of the agent's child processes is an iptables-restore; false when none came within {@code timeout}. */
    private static boolean awaitRestore(RulesyncProcess agent, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && agent.alive()) {
            boolean restoring = agent.process()
                    .descendants()
                    .anyMatch(p -> p.info().commandLine().orElse("").contains("iptables-restore"));
            if (restoring) {
                return true;
            }
            Thread.sleep(1);
        }
        return false;
    }
}
