package io.rulesync.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for PostgreSQL's notifications on one channel, so that a reader reads when something was committed instead of
 * on a short timer. Two channels are used: {@link #HEADS}, sent by {@link BatchStore#commit} with every new version
 * (the api wakes agents waiting for it), and {@link #OUTBOX}, sent by a trigger on every insert into {@code outbox}
 * (the compiler's relay publishes it), whichever process inserted it.
 *
 * <p>A notification is a hint, not a record: one sent while this listener is not connected is lost, so a reader also
 * reads on a timer, and a notification only makes that read come sooner. One connection of the pool is held for
 * listening; after a failure it is given back and taken again on the next {@link #await}.
 */
public final class Notifications implements AutoCloseable {
    /** New versions; the payload is the cluster. */
    public static final String HEADS = "rulesync_head";
    /** Rows inserted into {@code outbox} (migration V12's trigger); no payload. */
    public static final String OUTBOX = "rulesync_outbox";

    private static final Logger log = LoggerFactory.getLogger(Notifications.class);

    private final DataSource ds;
    private final String channel;
    private Connection listening;
    /** Said once per outage, not at every wait. */
    private boolean failing;

    public Notifications(DataSource ds, String channel) {
        this.ds = ds;
        this.channel = channel;
    }

    /** Listens from now on, if not yet: what is committed after this returns wakes the next {@link #await}. */
    public synchronized void listen() throws SQLException {
        if (listening == null) {
            Connection c = ds.getConnection();
            try (Statement st = c.createStatement()) {
                c.setAutoCommit(true);
                st.execute("LISTEN " + channel);
            } catch (SQLException e) {
                c.close();
                throw e;
            }
            listening = c;
        }
    }

    /**
     * Waits up to {@code timeout} for a notification. True when one came (or several: they are taken together); false
     * after the timeout, or at once (after the timeout's wait) when the database cannot be reached.
     */
    public synchronized boolean await(Duration timeout) throws InterruptedException {
        try {
            listen();
            PGNotification[] got =
                    listening.unwrap(PGConnection.class).getNotifications((int) Math.max(1, timeout.toMillis()));
            if (failing) {
                failing = false;
                log.info("listening on {} again", channel);
            }
            return got != null && got.length > 0;
        } catch (SQLException e) {
            if (!failing) {
                failing = true;
                log.warn("listening on {}: {}; reading on a timer until it works again", channel, e.getMessage());
            }
            drop();
            Thread.sleep(timeout.toMillis());
            return false;
        }
    }

    private void drop() {
        if (listening != null) {
            try {
                listening.close();
            } catch (SQLException ignored) {
                // a broken connection; the pool discards it
            }
            listening = null;
        }
    }

    @Override
    public synchronized void close() {
        drop();
    }
}
