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
 * Tells a waiting reader that some cluster has a new head: {@link BatchStore#commit} sends a PostgreSQL notification
 * on {@link #CHANNEL} with every new version, delivered when its transaction commits. The api waits here to answer
 * agents' long polls at once instead of on its next read of the heads.
 *
 * <p>A notification is a hint, not a record: one sent while this listener is not connected is lost, so a reader also
 * reads the heads on a timer, and a notification only makes that read come sooner. One connection of the pool is held
 * for listening; after a failure it is given back and taken again on the next {@link #await}.
 */
public final class HeadChanges implements AutoCloseable {
    /** The channel new versions are announced on; the payload is the cluster. */
    public static final String CHANNEL = "rulesync_head";
    private static final Logger log = LoggerFactory.getLogger(HeadChanges.class);

    private final DataSource ds;
    private Connection listening;

    public HeadChanges(DataSource ds) {
        this.ds = ds;
    }

    /**
     * Waits up to {@code timeout} for a new version of any cluster. True when one was announced; false after the
     * timeout, or at once (after the timeout's wait) when the database cannot be reached.
     */
    public synchronized boolean await(Duration timeout) throws InterruptedException {
        try {
            if (listening == null) {
                Connection c = ds.getConnection();
                try (Statement st = c.createStatement()) {
                    c.setAutoCommit(true);
                    st.execute("LISTEN " + CHANNEL);
                } catch (SQLException e) {
                    c.close();
                    throw e;
                }
                listening = c;
            }
            PGNotification[] got = listening.unwrap(PGConnection.class).getNotifications((int) Math.max(1, timeout.toMillis()));
            return got != null && got.length > 0;
        } catch (SQLException e) {
            log.warn("listening for new versions: {}; reading heads on a timer until it works again", e.getMessage());
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
