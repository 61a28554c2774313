package io.rulesync.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;

/**
 * One operator action as stored in {@code operator_action}: the request (who, what, why, when) and,
 * once the compiler carried it out, its outcome.
 *
 * @param action {@code rollback} or {@code resume}
 * @param toVersion the rollback's target; null for a resume
 * @param status {@code pending}, {@code done}, {@code rejected} or {@code expired}
 * @param resultVersion the version a done action produced
 * @param outcome why a rejected action was refused, or why an expired one was not carried out
 */
public record RecordedAction(
        long id,
        String cluster,
        String action,
        Long toVersion,
        String actor,
        String reason,
        Instant requestedAt,
        String status,
        Long resultVersion,
        String outcome,
        Instant completedAt) {

    static final String COLUMNS =
            "id, cluster, action, to_version, actor, reason, requested_at, status, result_version, "
                    + "outcome, completed_at";

    public boolean pending() {
        return "pending".equals(status);
    }

    static RecordedAction read(ResultSet rs) throws SQLException {
        long to = rs.getLong(4);
        Long toVersion = rs.wasNull() ? null : to;
        long result = rs.getLong(9);
        Long resultVersion = rs.wasNull() ? null : result;
        return new RecordedAction(
                rs.getLong(1),
                rs.getString(2),
                rs.getString(3),
                toVersion,
                rs.getString(5),
                rs.getString(6),
                rs.getTimestamp(7).toInstant(),
                rs.getString(8),
                resultVersion,
                rs.getString(10),
                instant(rs.getTimestamp(11)));
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
