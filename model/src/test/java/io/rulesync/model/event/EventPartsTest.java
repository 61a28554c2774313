package io.rulesync.model.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.event.ClusterEvent.SyncMarker;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** An event above the message limit goes as parts that put back together exactly; parts that do not are refused, saying why. */
class EventPartsTest {
    private static final Instant T = Instant.parse("2026-12-02T00:00:00Z");

    /** A sync marker of 50,000 Services: about 1.5 MB of JSON, above Kafka's default 1 MiB message limit. */
    static SyncMarker bigMarker() {
        return marker("service-");
    }

    static SyncMarker marker(String prefix) {
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < 50_000; i++) {
            keys.add("namespace-" + (i % 50) + "/" + prefix + i);
        }
        return new SyncMarker("prod", ObjectKind.SERVICE, keys, T);
    }

    private static List<EventParts.Part> read(List<String> messages) {
        return messages.stream().map(m -> EventParts.read(m).orElseThrow()).toList();
    }

    @Test
    void aLargeEventGoesAsPartsBelowTheLimitAndComesBackWhole() {
        String json = EventCodec.encode(bigMarker());
        assertThat(json.length()).isGreaterThan(1024 * 1024);
        List<String> messages = EventParts.split("prod", json, T, 900_000);
        assertThat(messages).hasSizeGreaterThan(1).allMatch(m -> m.length() <= 900_000);
        List<EventParts.Part> parts = read(messages);
        assertThat(parts)
                .extracting(EventParts.Part::part)
                .containsExactlyElementsOf(
                        IntStream.rangeClosed(1, parts.size()).boxed().toList());
        String whole = EventParts.join(parts);
        assertThat(whole).isEqualTo(json);
        assertThat(((EventCodec.Decoded.Valid) EventCodec.decode(whole)).event())
                .isEqualTo(bigMarker());
    }

    @Test
    void aSmallEventStaysOneMessageAndNoEventPassesForAPart() {
        String json = EventCodec.encode(new SyncMarker("prod", ObjectKind.NODE, Set.of("n1"), T));
        assertThat(EventParts.split("prod", json, T, 900_000)).containsExactly(json);
        assertThat(EventParts.read(json)).isEmpty();
        assertThat(EventParts.read("{not json")).isEmpty();
        // An object whose own fields say "part" is still an event.
        assertThat(EventParts.read("{\"v\":1,\"cluster\":\"prod\",\"type\":\"upsert\",\"object\":{\"type\":\"part\"}}"))
                .isEmpty();
    }

    @Test
    void partsOutOfOrderMissingOrFromAnotherEventAreRefused() {
        List<EventParts.Part> parts = read(EventParts.split("prod", EventCodec.encode(bigMarker()), T, 300_000));
        assertThat(parts).hasSizeGreaterThanOrEqualTo(3);

        List<EventParts.Part> swapped = new ArrayList<>(parts);
        Collections.swap(swapped, 0, 1);
        assertThatThrownBy(() -> EventParts.join(swapped)).hasMessageContaining("where part 1 of event");
        assertThatThrownBy(() -> EventParts.join(parts.subList(0, parts.size() - 1)))
                .hasMessageContaining("has " + (parts.size() - 1) + " of " + parts.size() + " parts");

        List<EventParts.Part> other = read(EventParts.split("prod", EventCodec.encode(marker("other-")), T, 300_000));
        List<EventParts.Part> mixed = new ArrayList<>(parts);
        mixed.set(1, other.get(1));
        assertThatThrownBy(() -> EventParts.join(mixed)).hasMessageContaining("where part 2 of event");

        // The same numbers and id but other text: the id (a SHA-256 of the whole) catches it.
        List<EventParts.Part> forged = new ArrayList<>(parts);
        EventParts.Part p = parts.get(1);
        forged.set(
                1,
                new EventParts.Part(
                        p.cluster(),
                        p.event(),
                        p.part(),
                        p.parts(),
                        p.text().replace("service-1", "service-9"),
                        p.observedAt()));
        assertThatThrownBy(() -> EventParts.join(forged)).hasMessageContaining("do not add up to it");
    }

    @Test
    void aPartWithABadFieldIsRefusedNamingIt() {
        String good = EventParts.split("prod", EventCodec.encode(bigMarker()), T, 900_000)
                .get(0);
        assertThatThrownBy(() -> EventParts.read(good.replace("\"parts\":", "\"parts\":1000")))
                .hasMessageStartingWith("parts: ")
                .hasMessageContaining("out of range");
        assertThatThrownBy(() -> EventParts.read(good.replaceFirst("\"event\":\"[0-9a-f]+\"", "\"event\":\"x\"")))
                .hasMessage("event: expected 32 lower-case hex digits");
        assertThatThrownBy(() -> EventParts.read(good.replace("\"part\":1,", "\"part\":0,")))
                .hasMessageStartingWith("part: 0 is out of range");
    }
}
