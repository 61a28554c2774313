package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A cluster's problems come back in the same order whatever collation the host's PostgreSQL was initialised with: a
 * database created under {@code LANG=en_US.UTF-8} sorts {@code 'Node n9'} after {@code 'manifests/...'}, C before it.
 */
@RequiresPostgres
class ProblemStoreTest {
    @Test
    void problemsAreInSourceOrderBytewiseUnderAnEnglishCollationToo() throws Exception {
        try (TestDatabase db =
                TestDatabase.create("TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")) {
            List<String> sources = List.of(
                    "manifests/shop/cart.yaml", "Node n9", "manifests/shop/web.yaml", "EndpointSlice shop/web-1");
            try (Connection c = db.dataSource().getConnection();
                    PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO cluster_problem (cluster, source, seq, location, object, field, message, reported_at)"
                                    + " VALUES ('shop', ?, ?, '', '', '', 'bad', ?)")) {
                for (String source : sources) {
                    for (int seq = 1; seq >= 0; seq--) {
                        ps.setString(1, source);
                        ps.setInt(2, seq);
                        ps.setTimestamp(3, Timestamp.from(Instant.parse("2026-11-29T12:00:00Z")));
                        ps.addBatch();
                    }
                }
                ps.executeBatch();
            }
            assertThat(new ProblemStore(db.dataSource()).problems("shop"))
                    .extracting(ProblemStore.StoredProblem::source)
                    .containsExactly(
                            "EndpointSlice shop/web-1",
                            "EndpointSlice shop/web-1",
                            "Node n9",
                            "Node n9",
                            "manifests/shop/cart.yaml",
                            "manifests/shop/cart.yaml",
                            "manifests/shop/web.yaml",
                            "manifests/shop/web.yaml");
        }
    }
}
