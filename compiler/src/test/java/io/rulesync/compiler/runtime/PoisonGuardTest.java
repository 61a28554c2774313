package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.store.StoreException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/** When a failing batch is the records' fault, and how many tries it gets. */
class PoisonGuardTest {
    private static StoreException refused(String sqlState) {
        return new StoreException(
                "commit failed", new DataIntegrityViolationException("x", new SQLException("refused", sqlState)));
    }

    @Test
    void dataRefusedByTheDatabaseOrTheCompilersOwnFailureIsTheRecords() {
        assertThat(PoisonGuard.recordsFault(refused("22021")))
                .as("invalid byte sequence")
                .isTrue();
        assertThat(PoisonGuard.recordsFault(refused("23514")))
                .as("check constraint")
                .isTrue();
        assertThat(PoisonGuard.recordsFault(new IllegalStateException("a bug"))).isTrue();
    }

    @Test
    void theDatabaseFailingIsNot() {
        assertThat(PoisonGuard.recordsFault(refused("23505")))
                .as("unique: another writer")
                .isFalse();
        assertThat(PoisonGuard.recordsFault(refused("08006")))
                .as("connection lost")
                .isFalse();
        assertThat(PoisonGuard.recordsFault(refused("57014")))
                .as("statement timeout")
                .isFalse();
        assertThat(PoisonGuard.recordsFault(refused("55P03")))
                .as("lock timeout")
                .isFalse();
        assertThat(PoisonGuard.recordsFault(refused("42P01")))
                .as("a table missing: the schema, not the record")
                .isFalse();
        assertThat(PoisonGuard.recordsFault(
                        new StoreException("x", new CannotGetJdbcConnectionException("pool closed"))))
                .isFalse();
        assertThat(PoisonGuard.recordsFault(new StoreException("x", new QueryTimeoutException("slow"))))
                .isFalse();
        assertThat(PoisonGuard.recordsFault(new StoreException("x", null))).isFalse();
    }

    @Test
    void aBatchIsTakenApartOnItsThirdFailureForWhatItHolds() {
        PoisonGuard g = new PoisonGuard();
        assertThat(g.takeApart(0, 10, refused("08006"))).isFalse();
        assertThat(g.takeApart(0, 10, refused("08006"))).isFalse();
        assertThat(g.takeApart(0, 10, refused("08006")))
                .as("the database's failures never count")
                .isFalse();
        assertThat(g.takeApart(0, 10, new IllegalStateException())).isFalse();
        assertThat(g.takeApart(0, 10, new IllegalStateException())).isFalse();
        assertThat(g.takeApart(1, 10, new IllegalStateException()))
                .as("another partition counts on its own")
                .isFalse();
        assertThat(g.takeApart(0, 10, new IllegalStateException())).isTrue();
        g.succeeded(0);
        assertThat(g.takeApart(0, 10, new IllegalStateException()))
                .as("counted again after a success")
                .isFalse();
    }

    @Test
    void recordsFailingOnTheirOwnInARowAreNotTheRecordsFaultAfterAll() {
        PoisonGuard g = new PoisonGuard();
        for (int i = 0; i < PoisonGuard.IN_A_ROW; i++) {
            assertThat(g.mayQuarantine(0)).isTrue();
        }
        assertThat(g.mayQuarantine(0)).isFalse();
        for (int i = 0; i < PoisonGuard.ATTEMPTS; i++) {
            assertThat(g.takeApart(0, 10, new IllegalStateException()))
                    .as("waits, retrying whole")
                    .isFalse();
        }
        g.succeeded(0);
        assertThat(g.mayQuarantine(0)).isTrue();
    }
}
