package io.rulesync.api.acks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.rulesync.store.EventLog;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.VersionHistory;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The ack writer's own database connection, outside the pool that queries share. With one pool, a burst of reads
 * that took every connection (twenty 5,000-node pages a second, bench/api-queries) left the writer waiting for one,
 * and after the pool's 2 s the fleet's acks were answered 503 (BENCHMARKS.md). The writer is one thread, so one
 * connection is all it uses; it is configured as the shared pool is (same database, timeouts and credentials).
 */
public final class AckConnection implements AutoCloseable {
    private final HikariDataSource own;
    private final NodeStatusStore store;
    private final VersionHistory versions;
    private final EventLog events;

    public AckConnection(DataSource shared) throws SQLException {
        HikariConfig config = new HikariConfig();
        shared.unwrap(HikariDataSource.class).copyStateTo(config);
        config.setPoolName("rulesync-acks");
        config.setMaximumPoolSize(1);
        config.setMinimumIdle(1);
        // The api starts while PostgreSQL is down (readiness follows it), and so does this pool.
        config.setInitializationFailTimeout(-1);
        this.own = new HikariDataSource(config);
        this.store = new NodeStatusStore(own);
        this.versions = new VersionHistory(own);
        this.events = new EventLog(own);
    }

    /** The acks' store on this connection. */
    public NodeStatusStore store() {
        return store;
    }

    /** The clusters' heads read on this connection: an ack is checked without waiting for the shared pool. */
    public VersionHistory versions() {
        return versions;
    }

    /** The event log read on this connection: what the acks' metrics ask ({@link AckMetrics}), on the writer's thread. */
    public EventLog events() {
        return events;
    }

    @Override
    public void close() {
        own.close();
    }
}
