package io.rulesync.compiler.runtime;

import static io.rulesync.compiler.runtime.ShopCluster.CLUSTER;
import static io.rulesync.compiler.runtime.ShopCluster.runs;
import static io.rulesync.compiler.runtime.ShopCluster.up;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.tiers.Tiers;
import io.rulesync.testsupport.PrivatePostgres;
import io.rulesync.testsupport.cluster.Fixtures;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The compiler's batch in flight when its PostgreSQL stops answering (frozen with SIGSTOP, as a hung host or dropped
 * packets): the driver gives the connection up, the batch's transaction never commits, and once the server answers
 * again the batch is committed once, history gapless.
 */
@Tag(Tiers.INTEGRATION)
@RequiresKafka
class CompilerDatabaseFreezeTest {
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);

    @Test
    void aBatchInFlightWhenTheDatabaseFreezesIsCommittedOnceAfterIt() throws Exception {
        try (PrivatePostgres pg = PrivatePostgres.create()) {
            String url = pg.url("postgres");
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(url);
            ds.setUser("postgres");
            // The defaults' 40 s socket timeout, shortened so that the test does not wait for it; the server's
            // limits are the defaults', checked below.
            try (ConfigurableApplicationContext compiler = TestCompiler.start(
                            url,
                            "postgres",
                            "",
                            topics,
                            run,
                            Map.of("spring.datasource.hikari.data-source-properties.socketTimeout", "5"));
                    ShopCluster shop = new ShopCluster(topics.events());
                    Connection locker = ds.getConnection()) {
                CompilerStores store = compiler.getBean(CompilerStores.class);
                try (Connection c = compiler.getBean(DataSource.class).getConnection();
                        Statement st = c.createStatement()) {
                    assertThat(show(st, "statement_timeout")).isEqualTo("30s");
                    assertThat(show(st, "lock_timeout")).isEqualTo("10s");
                    assertThat(show(st, "idle_in_transaction_session_timeout")).isEqualTo("30s");
                    assertThat(c.getNetworkTimeout())
                            .as("the driver's socket timeout, ms")
                            .isEqualTo(5_000);
                }
                shop.start();
                await("a version with the endpoint")
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> runs(store, "10.244.0.1:8080"));
                long first = store.history().head(CLUSTER);
                long events = count(ds, "cluster_event");

                // The next batch waits on a lock held elsewhere, inside its transaction; then the whole server freezes.
                locker.setAutoCommit(false);
                try (Statement st = locker.createStatement()) {
                    st.execute("LOCK TABLE cluster_event IN ACCESS EXCLUSIVE MODE");
                }
                shop.send(up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
                await("the batch waiting on the lock")
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> waitingOnALock(ds) > 0);
                MeterRegistry meters = compiler.getBean(MeterRegistry.class);
                pg.freeze();
                try {
                    // Past the socket timeout the batch is given up, while the server still says nothing: without a
                    // socket timeout it would wait here as long as the server does.
                    await("the batch given up while the database is frozen")
                            .atMost(Duration.ofSeconds(15))
                            .until(() -> meters.get("rulesync.batches.failed")
                                            .counter()
                                            .count()
                                    >= 1);
                } finally {
                    pg.thaw();
                }
                locker.rollback();
                long back = System.nanoTime();

                await("the batch committed again")
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> store.history().head(CLUSTER) == first + 1);
                System.out.printf(
                        "the database answering again: the batch committed after %d ms%n",
                        Duration.ofNanos(System.nanoTime() - back).toMillis());
                assertThat(runs(store, "10.244.0.2:8080")).isTrue();
                assertThat(count(ds, "cluster_event"))
                        .as("the event stored once")
                        .isEqualTo(events + 1);
                assertThat(count(ds, "version"))
                        .as("versions 1.." + (first + 1) + ", no gap or duplicate")
                        .isEqualTo(first + 1);
            }
        }
    }

    private static long count(DataSource ds, String table) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT count(*) FROM " + table + " WHERE cluster = '" + CLUSTER + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static int waitingOnALock(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static String show(Statement st, String setting) throws SQLException {
        try (ResultSet rs = st.executeQuery("SHOW " + setting)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
