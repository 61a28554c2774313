package io.rulesync.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The snapshot's entity tag: written and read back the one way the api and the agents share. */
class SnapshotTagTest {
    private static final String L = "0123456789abcdef0123456789abcdef";

    @Test
    void readsBackWhatItWrites() {
        assertThat(new SnapshotTag(12, L).header()).isEqualTo("\"v12-" + L + "\"");
        assertThat(new SnapshotTag(12, "").header()).isEqualTo("\"v12\"");
        assertThat(SnapshotTag.parse("\"v12-" + L + "\"")).isEqualTo(new SnapshotTag(12, L));
        assertThat(SnapshotTag.parse("\"v12\"")).isEqualTo(new SnapshotTag(12, ""));
    }

    @Test
    void refusesWhatIsNotATag() {
        assertThatThrownBy(() -> SnapshotTag.parse("\"12\""))
                .hasMessage("ETag \"12\" is not \"v<version>[-<lineage>]\"");
        assertThatThrownBy(() -> SnapshotTag.parse("\"vx-" + L + "\"")).hasMessageStartingWith("ETag \"vx-");
        assertThatThrownBy(() -> SnapshotTag.parse("\"v12-abc\""))
                .hasMessage("lineage: 'abc' is not a lineage (32 lowercase hex digits)");
        assertThatThrownBy(() -> SnapshotTag.parse(null)).hasMessage("ETag null is not \"v<version>[-<lineage>]\"");
    }
}
