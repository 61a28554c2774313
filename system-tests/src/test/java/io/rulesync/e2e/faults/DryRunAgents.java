package io.rulesync.e2e.faults;

import io.rulesync.e2e.AgentTokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One dry-run agent per node of the fault harnesses' cluster ({@code node-0} ..), each a process of its own
 * ({@code rulesync.jar agent --dry-run}): the agents' real feed, snapshots, validation, in-memory kernel and acks.
 * Whether they converge is read where operators read it: {@code node_status}, from their acks.
 */
final class DryRunAgents implements AutoCloseable {
    /** Each agent's own api token; the api must accept {@link #tokenLines}. */
    private static final AgentTokens TOKENS = AgentTokens.random();

    /** The api's token lines for the {@code nodes} agents of {@code cluster}. */
    static List<String> tokenLines(String cluster, int nodes) {
        List<String> lines = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            lines.add(TOKENS.line(cluster, "node-" + n));
        }
        return lines;
    }

    private final String cluster;
    private final List<RulesyncProcess> processes;

    private DryRunAgents(String cluster, List<RulesyncProcess> processes) {
        this.cluster = cluster;
        this.processes = processes;
    }

    static DryRunAgents start(Path jar, String cluster, int nodes, String kafka, String api, Path dir)
            throws IOException {
        Files.createDirectories(dir);
        List<RulesyncProcess> processes = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            String node = "node-" + n;
            Path token = dir.resolve("agent-token-" + node);
            Files.writeString(token, TOKENS.token(cluster, node) + "\n");
            // The agent refuses a token file others may read.
            Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
            processes.add(RulesyncProcess.start(
                    "agent-" + node,
                    jar,
                    List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"),
                    List.of(
                            "agent",
                            "--cluster",
                            cluster,
                            "--node",
                            node,
                            "--kafka",
                            kafka,
                            "--api",
                            api,
                            "--api-token-file",
                            token.toString(),
                            "--dry-run",
                            Files.createDirectories(dir.resolve(node)).toString(),
                            "--ip-families",
                            "ipv4",
                            "--metrics-bind-address",
                            "off",
                            "--healthz-bind-address",
                            "off"),
                    null));
        }
        return new DryRunAgents(cluster, processes);
    }

    /** Agents that exited (they should not). */
    List<String> exited() {
        return processes.stream()
                .filter(p -> !p.alive())
                .map(p -> p.name() + " exited (see target/faults-" + p.name() + ".log)")
                .toList();
    }

    /** The version each node runs, from its acks. */
    Map<String, Long> running(JdbcTemplate sql) {
        Map<String, Long> out = new TreeMap<>();
        sql.query(
                "SELECT node, running FROM node_status WHERE cluster = ? AND last_status = 'APPLIED'",
                rs -> {
                    out.put(rs.getString(1), rs.getLong(2));
                },
                cluster);
        return out;
    }

    /** Waits until every agent acknowledged {@code version} applied; false when one had not within {@code timeout}. */
    boolean awaitAll(JdbcTemplate sql, long version, Duration timeout) {
        return Eventually.within(timeout, () -> {
            Map<String, Long> running = running(sql);
            return running.size() == processes.size()
                    && running.values().stream().allMatch(v -> v == version);
        });
    }

    @Override
    public void close() throws InterruptedException {
        for (RulesyncProcess p : processes) {
            p.stop();
        }
    }
}
