package io.rulesync.agent.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SequenceEditsTest {

    /** Deletes from the highest index down (so indices stay valid), then inserts in order. */
    static List<String> replay(List<String> before, SequenceEdits e) {
        List<String> l = new ArrayList<>(before);
        for (int k = e.deletes().size() - 1; k >= 0; k--) {
            SequenceEdits.Delete d = e.deletes().get(k);
            assertThat(l.remove(d.index())).isEqualTo(d.rule());
        }
        for (SequenceEdits.Insert i : e.inserts()) {
            assertThat(i.index()).isBetween(0, l.size());
            l.add(i.index(), i.rule());
        }
        return l;
    }

    static Stream<Long> seeds() {
        return IntStream.range(0, 300).mapToObj(i -> 7_000L + i);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void editsTurnBeforeIntoAfter(long seed) {
        Random r = new Random(seed);
        List<String> before = new ArrayList<>();
        int n = r.nextInt(r.nextBoolean() ? 20 : 3000);
        for (int i = 0; i < n; i++) {
            before.add("rule-" + r.nextInt(n * 2 + 1)); // duplicates happen
        }
        List<String> after = new ArrayList<>(before);
        int changes = r.nextInt(r.nextInt(10) == 0 ? 3000 : 8);
        for (int c = 0; c < changes; c++) {
            int op = r.nextInt(3);
            if (op == 0 || after.isEmpty()) {
                after.add(r.nextInt(after.size() + 1), "new-" + r.nextInt(1000));
            } else if (op == 1) {
                after.remove(r.nextInt(after.size()));
            } else {
                after.set(r.nextInt(after.size()), "changed-" + r.nextInt(1000));
            }
        }
        SequenceEdits e = SequenceEdits.between(before, after);
        assertThat(replay(before, e)).as("seed %d", seed).isEqualTo(after);
        if (changes <= 8) {
            assertThat(e.deletes().size() + e.inserts().size())
                    .as("seed %d: edits stay small", seed)
                    .isLessThanOrEqualTo(2 * changes);
        }
    }

    @Test
    void addingOneServiceInsertsItsRulesOnly() {
        List<String> before =
                IntStream.range(0, 10_000).mapToObj(i -> "svc-" + i).toList();
        List<String> after = new ArrayList<>(before);
        after.add(5_000, "svc-new");
        after.add(9_001, "svc-new-2");
        SequenceEdits e = SequenceEdits.between(before, after);
        assertThat(e.deletes()).isEmpty();
        assertThat(e.inserts())
                .containsExactly(
                        new SequenceEdits.Insert(5_000, "svc-new"), new SequenceEdits.Insert(9_001, "svc-new-2"));
    }

    @Test
    void removingOneServiceDeletesItsRulesOnly() {
        List<String> before =
                IntStream.range(0, 10_000).mapToObj(i -> "svc-" + i).toList();
        List<String> after = new ArrayList<>(before);
        after.remove(123);
        SequenceEdits e = SequenceEdits.between(before, after);
        assertThat(e.inserts()).isEmpty();
        assertThat(e.deletes()).containsExactly(new SequenceEdits.Delete(123, "svc-123"));
    }

    @Test
    void equalListsNeedNothing() {
        assertThat(SequenceEdits.between(List.of("a", "b"), List.of("a", "b")).isEmpty())
                .isTrue();
        assertThat(SequenceEdits.between(List.of(), List.of()).isEmpty()).isTrue();
    }
}
