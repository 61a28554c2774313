package io.rulesync.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * PostgreSQL storage of staged rollouts (tables {@code rollout_policy}, {@code rollout}, {@code rollout_log}, see their
 * migration). Policies and steps are stored as given; what they mean is the api's {@code rollout} package.
 */
public final class RolloutStore {
    /** A cluster's policy (JSON), who set it and why. */
    public record StoredPolicy(String cluster, String json, String setBy, String reason, Instant setAt) {}

    /** Where a cluster's rollout stands; {@code state} in lower case as stored. */
    public record Row(
            String cluster,
            long version,
            long stable,
            int wave,
            Instant waveOpenedAt,
            Instant startedAt,
            String state,
            String cause,
            long revision) {}

    /** One step of a rollout, for the audit. */
    public record Entry(
            long id,
            String cluster,
            long version,
            Instant at,
            String event,
            String wave,
            String actor,
            String detail) {}

    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public RolloutStore(DataSource ds) {
        this.sql = JdbcClient.create(ds);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /** Every cluster's policy, by cluster. */
    public Map<String, StoredPolicy> policies() {
        Map<String, StoredPolicy> out = new TreeMap<>();
        StoreException.during(
                        "reading the rollout policies",
                        () -> sql.sql("SELECT cluster, policy, set_by, reason, set_at FROM rollout_policy")
                                .query((rs, n) -> new StoredPolicy(
                                        rs.getString(1),
                                        rs.getString(2),
                                        rs.getString(3),
                                        rs.getString(4),
                                        instant(rs, 5)))
                                .list())
                .forEach(p -> out.put(p.cluster(), p));
        return out;
    }

    public Optional<StoredPolicy> policy(String cluster) {
        return Optional.ofNullable(policies().get(cluster));
    }

    /**
     * Sets (or, with a null {@code json}, removes) a cluster's policy and logs it; a removed policy ends its rollout, so
     * the cluster's nodes get every version at once again.
     */
    public void setPolicy(String cluster, String json, String actor, String reason, long head, Instant now) {
        StoreException.during(
                "storing the rollout policy of " + cluster,
                () -> tx.execute(s -> {
                    if (json == null) {
                        sql.sql("DELETE FROM rollout_policy WHERE cluster = ?")
                                .param(cluster)
                                .update();
                        sql.sql("DELETE FROM rollout WHERE cluster = ?")
                                .param(cluster)
                                .update();
                    } else {
                        sql.sql(
                                        "INSERT INTO rollout_policy (cluster, policy, set_by, reason, set_at) VALUES (?, ?, ?, ?, ?) "
                                                + "ON CONFLICT (cluster) DO UPDATE SET policy = EXCLUDED.policy, set_by = EXCLUDED.set_by, "
                                                + "reason = EXCLUDED.reason, set_at = EXCLUDED.set_at")
                                .params(cluster, json, actor, reason, Timestamp.from(now))
                                .update();
                    }
                    log(new Entry(
                            0,
                            cluster,
                            Math.max(1, head),
                            now,
                            json == null ? "policy-removed" : "policy-set",
                            null,
                            actor,
                            json == null ? reason : reason + ": " + json));
                    return null;
                }));
    }

    public Optional<Row> rollout(String cluster) {
        return StoreException.during(
                "reading the rollout of " + cluster,
                () -> sql.sql(
                                "SELECT cluster, version, stable, wave, wave_opened_at, started_at, state, cause, revision FROM rollout WHERE cluster = ?")
                        .param(cluster)
                        .query((rs, n) -> new Row(
                                rs.getString(1),
                                rs.getLong(2),
                                rs.getLong(3),
                                rs.getInt(4),
                                instant(rs, 5),
                                instant(rs, 6),
                                rs.getString(7),
                                rs.getString(8),
                                rs.getLong(9)))
                        .optional());
    }

    /**
     * Stores {@code next} if the stored rollout is still at {@code readRevision} (none stored: -1), with its log entries,
     * in one transaction. False: another replica stored a step first; read again.
     */
    public boolean save(Row next, long readRevision, List<Entry> entries) {
        return StoreException.during(
                "storing the rollout of " + next.cluster(),
                () -> tx.execute(s -> {
                    int n;
                    if (readRevision < 0) {
                        n = sql.sql(
                                        "INSERT INTO rollout (cluster, version, stable, wave, wave_opened_at, started_at, state, cause, revision) "
                                                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (cluster) DO NOTHING")
                                .params(
                                        next.cluster(),
                                        next.version(),
                                        next.stable(),
                                        next.wave(),
                                        Timestamp.from(next.waveOpenedAt()),
                                        Timestamp.from(next.startedAt()),
                                        next.state(),
                                        next.cause(),
                                        next.revision())
                                .update();
                    } else {
                        n = sql.sql(
                                        "UPDATE rollout SET version = ?, stable = ?, wave = ?, wave_opened_at = ?, started_at = ?, state = ?, "
                                                + "cause = ?, revision = ? WHERE cluster = ? AND revision = ?")
                                .params(
                                        next.version(),
                                        next.stable(),
                                        next.wave(),
                                        Timestamp.from(next.waveOpenedAt()),
                                        Timestamp.from(next.startedAt()),
                                        next.state(),
                                        next.cause(),
                                        next.revision(),
                                        next.cluster(),
                                        readRevision)
                                .update();
                    }
                    if (n == 1) {
                        entries.forEach(this::log);
                    }
                    return n == 1;
                }));
    }

    /** A cluster's rollout log (null: every cluster's), newest first. */
    public List<Entry> log(String cluster, int limit) {
        return entries(
                (cluster == null ? "" : "WHERE cluster = ? ") + "ORDER BY id DESC LIMIT ?",
                cluster == null ? List.of(limit) : List.of(cluster, limit));
    }

    /** The rollout steps of one version of a cluster, oldest first. */
    public List<Entry> log(String cluster, long version) {
        return entries("WHERE cluster = ? AND version = ? ORDER BY id LIMIT 1000", List.of(cluster, version));
    }

    private List<Entry> entries(String whereAndOrder, List<?> params) {
        return StoreException.during(
                "reading the rollout log",
                () -> sql.sql("SELECT id, cluster, version, at, event, wave, actor, detail FROM rollout_log "
                                + whereAndOrder)
                        .params(params)
                        .query((rs, n) -> new Entry(
                                rs.getLong(1),
                                rs.getString(2),
                                rs.getLong(3),
                                instant(rs, 4),
                                rs.getString(5),
                                rs.getString(6),
                                rs.getString(7),
                                rs.getString(8)))
                        .list());
    }

    /** The versions of a cluster that a rollout halted (or an operator aborted): never served on the way to a later one. */
    public List<Long> haltedVersions(String cluster) {
        return StoreException.during(
                "reading the halted versions of " + cluster,
                () -> sql.sql(
                                "SELECT DISTINCT version FROM rollout_log WHERE cluster = ? AND event IN ('halted', 'aborted', 'superseded')")
                        .param(cluster)
                        .query(Long.class)
                        .list());
    }

    private void log(Entry e) {
        sql.sql(
                        "INSERT INTO rollout_log (cluster, version, at, event, wave, actor, detail) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .params(e.cluster(), e.version(), Timestamp.from(e.at()), e.event(), e.wave(), e.actor(), e.detail())
                .update();
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
