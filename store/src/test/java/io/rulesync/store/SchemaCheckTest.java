package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/** The api's start: a migrated schema passes; one behind the migrations it carries is refused in one line naming them. */
@RequiresPostgres
class SchemaCheckTest {

    @Test
    void aCurrentSchemaPassesAndOneBehindIsRefusedNamingTheMissingMigration() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            Flyway flyway = Flyway.configure().dataSource(db.dataSource()).load();
            assertThatCode(() -> SchemaCheck.require(flyway)).doesNotThrowAnyException();

            // As if the compiler that migrated it predates V5.
            try (Connection c = db.dataSource().getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DELETE FROM flyway_schema_history WHERE version = '5'");
            }
            assertThatThrownBy(() -> SchemaCheck.require(flyway))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith(
                            "the database schema is not the one this role reads (the compiler migrates it")
                    .hasMessageEndingWith("V5 cluster problems: not applied")
                    .hasMessageNotContaining("\n");
        }
    }

    @Test
    void anEmptyDatabaseIsRefused() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            try (Connection c = db.dataSource().getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
            }
            Flyway flyway = Flyway.configure().dataSource(db.dataSource()).load();
            assertThatThrownBy(() -> SchemaCheck.require(flyway))
                    .hasMessageContaining("V1 event log and versions: not applied; V2 node status: not applied");
        }
    }
}
