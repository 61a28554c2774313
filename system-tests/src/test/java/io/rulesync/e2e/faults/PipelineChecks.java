package io.rulesync.e2e.faults;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.store.VersionHistory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What every fault harness checks once the stream has stopped and the pipeline caught up: nothing was lost.
 * <ul>
 *   <li>every event delivered to Kafka is stored exactly once (the same payloads, as a multiset);</li>
 *   <li>the versions are 1..N without gap or duplicate;</li>
 *   <li>the newest version's rules are what the compiler's core gives for the final objects (what
 *       {@code ./rulesync compile} gives for them).</li>
 * </ul>
 */
final class PipelineChecks {
    private final String cluster;
    private final DataSource ds;
    private final JdbcTemplate sql;

    PipelineChecks(String cluster, DataSource ds) {
        this.cluster = cluster;
        this.ds = ds;
        this.sql = new JdbcTemplate(ds);
    }

    /** The sum of the compiler's stored positions: it grows with every committed batch. */
    long committed() {
        return sql.queryForObject("SELECT coalesce(sum(next_offset), 0) FROM consumer_position", Long.class);
    }

    long stored() {
        return sql.queryForObject("SELECT count(*) FROM cluster_event WHERE cluster = ?", Long.class, cluster);
    }

    long head() {
        return new VersionHistory(ds).head(cluster);
    }

    /** Waits (up to {@code timeout}) until {@code n} events are stored, then a little more: a duplicate would come after. */
    void awaitStored(long n, Duration timeout) throws InterruptedException {
        Eventually.within(timeout, () -> stored() >= n);
        Thread.sleep(2000);
    }

    /** What does not hold; empty when nothing was lost. */
    List<String> failures(ChangeStream stream) {
        List<String> failures = new ArrayList<>();
        if (stream.failure() != null) {
            failures.add("the stream of changes stopped: " + stream.failure());
        }
        List<String> sent = stream.delivered();
        List<String> payloads = sql.queryForList(
                "SELECT payload FROM cluster_event WHERE cluster = ? ORDER BY id", String.class, cluster);
        if (!multiset(payloads).equals(multiset(sent))) {
            failures.add(
                    "events: " + sent.size() + " delivered, " + payloads.size() + " stored, and not the same ones");
        }
        Map<String, Object> v = sql.queryForMap(
                "SELECT count(*) AS n, coalesce(min(seq), 0) AS lo, coalesce(max(seq), 0) AS hi "
                        + "FROM version WHERE cluster = ?",
                cluster);
        long versions = ((Number) v.get("n")).longValue();
        if (versions == 0
                || ((Number) v.get("lo")).longValue() != 1
                || ((Number) v.get("hi")).longValue() != versions) {
            failures.add("versions: " + v + " is not 1..N without gaps");
        }
        if (!newestRulesMatch(stream)) {
            failures.add("rules: the newest version's differ from the compile of the final objects");
        }
        return failures;
    }

    boolean newestRulesMatch(ChangeStream stream) {
        VersionHistory history = new VersionHistory(ds);
        ClusterRules newest = history.rules(cluster, history.head(cluster));
        return newest.equals(ClusterCompiler.compile(stream.finalState(), ClusterSettings.DEFAULT)
                .rules());
    }

    private static Map<String, Integer> multiset(List<String> values) {
        Map<String, Integer> m = new HashMap<>();
        values.forEach(v -> m.merge(v, 1, Integer::sum));
        return m;
    }
}
