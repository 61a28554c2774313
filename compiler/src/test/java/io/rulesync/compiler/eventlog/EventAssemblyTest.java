package io.rulesync.compiler.eventlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.EventParts;
import io.rulesync.model.event.ObjectKind;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Parts put back together per cluster, in order; what does not fit is refused or abandoned, saying so. */
class EventAssemblyTest {
    private static final Instant T = Instant.parse("2026-12-02T00:00:00Z");

    private static List<String> parts(String cluster, String prefix) {
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < 2_000; i++) {
            keys.add("namespace-" + (i % 5) + "/" + prefix + i);
        }
        String json = EventCodec.encode(new SyncMarker(cluster, ObjectKind.SERVICE, keys, T));
        return EventParts.split(cluster, json, T, 20_000);
    }

    @Test
    void partsOfTwoClustersInterleavedComeBackWholeEach() {
        List<String> a = parts("a", "web-");
        List<String> b = parts("b", "api-");
        assertThat(a).hasSizeGreaterThan(2);
        EventAssembly assembly = EventAssembly.EMPTY;
        String wholeA = null;
        String wholeB = null;
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            for (String[] kv : new String[][] {
                i < a.size() ? new String[] {"a", a.get(i)} : null, i < b.size() ? new String[] {"b", b.get(i)} : null
            }) {
                if (kv == null) {
                    continue;
                }
                EventAssembly.Offer o = assembly.offer(kv[0], kv[1]);
                assembly = o.next();
                if (o.outcome() instanceof EventAssembly.Outcome.Whole w) {
                    if (kv[0].equals("a")) {
                        wholeA = w.json();
                    } else {
                        wholeB = w.json();
                    }
                } else {
                    assertThat(o.outcome()).isInstanceOf(EventAssembly.Outcome.Stored.class);
                }
            }
        }
        assertThat(((SyncMarker) ((EventCodec.Decoded.Valid) EventCodec.decode(wholeA)).event()).cluster())
                .isEqualTo("a");
        assertThat(((SyncMarker) ((EventCodec.Decoded.Valid) EventCodec.decode(wholeB)).event()).keys())
                .hasSize(2_000);
        assertThat(assembly.pending("a")).isEmpty();
        assertThat(assembly.offer("a", "{\"v\":1}").outcome()).isInstanceOf(EventAssembly.Outcome.NotAPart.class);
    }

    @Test
    void aRestoredUnfinishedEventIsCompletedAndAnotherFirstPartAbandonsIt() {
        List<String> a = parts("a", "web-");
        EventAssembly restored = EventAssembly.EMPTY.restored(
                "a",
                a.subList(0, 2).stream()
                        .map(p -> EventParts.read(p).orElseThrow())
                        .toList());
        EventAssembly assembly = restored;
        for (String p : a.subList(2, a.size())) {
            EventAssembly.Offer o = assembly.offer("a", p);
            assembly = o.next();
        }
        assertThat(assembly.pending("a")).isEmpty();

        // A new event's first part while the restored one is unfinished: the old parts are abandoned, and said to be.
        List<String> other = parts("a", "db-");
        EventAssembly.Offer o = restored.offer("a", other.get(0));
        assertThat(o.outcome())
                .isInstanceOfSatisfying(
                        EventAssembly.Outcome.Stored.class,
                        s -> assertThat(s.abandoned()).hasSize(2));
        assertThat(o.next().pending("a")).hasSize(1);
    }

    @Test
    void aPartOfAnotherClustersKeyOrOutOfItsPlaceIsRefusedWithTheReason() {
        List<String> a = parts("a", "web-");
        assertThat(EventAssembly.EMPTY.offer("b", a.get(0)).outcome())
                .isEqualTo(new EventAssembly.Outcome.Refused("record key 'b' is not the part's cluster 'a'"));
        assertThat(EventAssembly.EMPTY.offer("a", a.get(1)).outcome())
                .isInstanceOfSatisfying(
                        EventAssembly.Outcome.Refused.class,
                        r -> assertThat(r.reason())
                                .startsWith("part 2 of event ")
                                .endsWith(" came without the parts before it"));
        // Refused, the assembly is unchanged: the next part in order still fits.
        EventAssembly first = EventAssembly.EMPTY.offer("a", a.get(0)).next();
        assertThat(first.offer("a", a.get(2)).next().pending("a")).hasSize(1);
        assertThat(first.offer("a", a.get(1)).next().pending("a")).hasSize(2);
    }
}
