package io.rulesync.api.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.Json;
import org.junit.jupiter.api.Test;

/** A version's cause as one line, the same on the command line and the dashboard. */
class CauseTextTest {
    private static String summary(String json) {
        return CauseText.summary(Json.MAPPER.readTree(json));
    }

    @Test
    void operatorActionsComeFirstThenObjectsThenTheRestWithoutOffsets() {
        assertThat(summary("""
                {"events": 3, "topic": "rulesync.cluster-events", "partition": 0, "firstOffset": 10, "lastOffset": 12,
                 "objects": ["Service shop/web", "EndpointSlice shop/web-1"], "moreObjects": 4,
                 "operatorActions": [{"action": "rollback", "toVersion": 7, "actor": "otto", "reason": "bad deploy"}],
                 "resync": "digest mismatch"}"""))
                .isEqualTo(
                        "rollback to v7 by otto: bad deploy; Service shop/web, EndpointSlice shop/web-1 (+4 more); resync: digest mismatch");
        assertThat(
                        summary(
                                "{\"operatorActions\": [{\"action\": \"resume\", \"actor\": \"otto\", \"reason\": \"fixed\"}]}"))
                .isEqualTo("resume by otto: fixed");
        assertThat(summary("{\"settings\": {\"masqueradeAll\": true}}"))
                .isEqualTo("settings: {\"masqueradeAll\":true}");
    }

    @Test
    void nothingToSayIsADash() {
        assertThat(summary("{\"events\": 0}")).isEqualTo("-");
        assertThat(CauseText.summary(null)).isEqualTo("-");
    }
}
