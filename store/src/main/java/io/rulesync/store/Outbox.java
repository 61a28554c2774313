package io.rulesync.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactional outbox (table {@code outbox}): messages committed with the rows they announce
 * ({@link BatchStore#commit}, {@link OperatorActionStore#request}), published to Kafka by the
 * compiler's relay.
 */
public final class Outbox {
    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public Outbox(DataSource ds) {
        this.sql = JdbcClient.create(ds);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /** An outbox message waiting to be published. */
    public record OutboxMessage(long id, String topic, String key, String payload) {}

    /** What publishing a batch of outbox messages needs: true once all were acknowledged. */
    public interface Publisher {
        boolean publish(List<OutboxMessage> messages);
    }

    /**
     * Publishes the oldest outbox messages and deletes them, in one transaction that locks the rows
     * it took (SKIP LOCKED), so that several relays never publish the same row at the same time.
     * Returns how many were published; 0 when there was nothing to do or publishing failed (the rows
     * stay for the next attempt: delivery is at least once, and receivers dedupe by version).
     */
    public int relay(int limit, Publisher publisher) {
        return StoreException.during(
                "relaying the outbox",
                () -> tx.execute(status -> {
                    List<OutboxMessage> batch = sql.sql("SELECT id, topic, record_key, payload FROM outbox "
                                    + "ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED")
                            .param(limit)
                            .query(Outbox::message)
                            .list();
                    if (batch.isEmpty() || !publisher.publish(batch)) {
                        status.setRollbackOnly();
                        return 0;
                    }
                    sql.sql("DELETE FROM outbox WHERE id = ANY (?)")
                            .param(new SqlArrayValue(
                                    "bigint",
                                    batch.stream().map(OutboxMessage::id).toArray()))
                            .update();
                    return batch.size();
                }));
    }

    /** The oldest messages not yet published, without taking them. */
    public List<OutboxMessage> pending(int limit) {
        return StoreException.during(
                "reading the outbox",
                () -> sql.sql("SELECT id, topic, record_key, payload FROM outbox ORDER BY id LIMIT ?")
                        .param(limit)
                        .query(Outbox::message)
                        .list());
    }

    private static OutboxMessage message(ResultSet rs, int row) throws SQLException {
        return new OutboxMessage(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4));
    }
}
