package io.rulesync.compiler.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.testsupport.cluster.ClusterGenerator;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A checkpoint folded with the events after it is the whole log folded; one that no longer reads back is refused with why. */
class CheckpointTest {
    private static final String C = "prod";
    private static final Instant T = Instant.parse("2026-12-02T00:00:00Z");
    private static final ClusterSettings MASQUERADE_ALL =
            new ClusterSettings(List.of(IpFamily.IPV4), List.of(), true, 14, List.of());

    static Stream<Long> seeds() {
        return LongStream.range(0, 40).boxed();
    }

    /**
     * A random log: every object of a generated cluster upserted in random order, settings, problem reports,
     * then random changes (objects changed and deleted, sources cleared, a sync marker that drops some).
     */
    static List<ClusterEvent> log(Random r) {
        ClusterGenerator.Cluster cluster = new ClusterGenerator(r).cluster(8 + r.nextInt(8));
        List<ClusterObject> objects = new ArrayList<>();
        objects.addAll(cluster.services());
        objects.addAll(cluster.slices());
        objects.addAll(cluster.nodes());
        Collections.shuffle(objects, r);
        List<ClusterEvent> log = new ArrayList<>();
        log.add(new SettingsChanged(C, ClusterSettings.DEFAULT, T));
        for (ClusterObject o : objects) {
            log.add(new ObjectUpserted(C, o, "1", T));
        }
        log.add(ProblemsReported.of(
                C,
                "shop/bad.yaml",
                List.of(new Problem(
                        "shop/bad.yaml", "Service shop/bad", "spec.ports[0].port", "must be between 1 and 65535")),
                T));
        log.add(ProblemsReported.of(
                C, "shop/worse.yaml", List.of(new Problem("shop/worse.yaml", "", "", "not YAML")), T));
        ClusterGenerator more = new ClusterGenerator(r);
        for (int i = 0; i < 20; i++) {
            ClusterObject o = objects.get(r.nextInt(objects.size()));
            switch (r.nextInt(4)) {
                case 0 -> log.add(new ObjectDeleted(C, ObjectRef.of(o), "2", T));
                case 1 -> {
                    if (o instanceof Service s) {
                        Service changed = more.service(s.name());
                        log.add(new ObjectUpserted(C, changed, "2", T));
                        more.slicesFor(changed).forEach(sl -> log.add(new ObjectUpserted(C, sl, "2", T)));
                    }
                }
                case 2 -> log.add(ProblemsReported.of(C, "shop/bad.yaml", List.of(), T));
                default -> log.add(new ObjectUpserted(C, o, "3", T)); // a repeat: changes nothing
            }
        }
        Set<String> kept = objects.stream()
                .filter(o -> o instanceof EndpointSlice && r.nextBoolean())
                .map(o -> ObjectRef.of(o).key())
                .collect(Collectors.toCollection(TreeSet::new));
        log.add(new SyncMarker(C, ObjectKind.ENDPOINT_SLICE, kept, T));
        return log;
    }

    private static ClusterHead fold(List<ClusterEvent> events) {
        return ClusterHead.rebuilt(C, events, 1, ClusterRules.EMPTY, null, Lineage.UNKNOWN);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aCheckpointAndTheEventsAfterItFoldToWhatTheWholeLogFoldsTo(long seed) {
        Random r = new Random(seed);
        List<ClusterEvent> log = log(r);
        int cut = 1 + r.nextInt(log.size() - 1);
        String text = Checkpoint.write(fold(log.subList(0, cut)), T);

        Checkpoint.Read read = Checkpoint.read(C, text);
        assertThat(read).isInstanceOf(Checkpoint.Read.Usable.class);
        List<ClusterEvent> replay = new ArrayList<>(((Checkpoint.Read.Usable) read).events());
        replay.addAll(log.subList(cut, log.size()));
        ClusterHead whole = fold(log);
        ClusterHead shortened = fold(replay);
        assertThat(shortened.view()).isEqualTo(whole.view());
        assertThat(shortened.problems()).isEqualTo(whole.problems());
        assertThat(shortened.admissionProblems()).isEqualTo(whole.admissionProblems());
        assertThat(shortened.pendingDiff()).isEqualTo(whole.pendingDiff());
        // As short as the state: one line per object, the digest, the settings and one per source with problems.
        assertThat(text.lines().count())
                .isEqualTo(2L
                        + fold(log.subList(0, cut)).view().state().objectCount()
                        + fold(log.subList(0, cut)).problems().bySource().size());
    }

    @Test
    void equalStatesGiveByteIdenticalCheckpointsWhateverTheOrderOfTheirEvents() {
        List<ClusterEvent> log = log(new Random(7));
        List<ClusterEvent> upserts = new ArrayList<>(
                log.stream().filter(e -> e instanceof ObjectUpserted).toList());
        List<ClusterEvent> a = new ArrayList<>(upserts);
        List<ClusterEvent> b = new ArrayList<>(upserts);
        Collections.shuffle(a, new Random(1));
        Collections.shuffle(b, new Random(2));
        // Upserts of distinct objects commute; repeats and changes of one object keep their order.
        assertThat(Checkpoint.write(fold(dedupLastWins(a)), T)).isEqualTo(Checkpoint.write(fold(dedupLastWins(b)), T));
    }

    /** The last upsert of each object, in the list's order: a log whose order does not matter. */
    private static List<ClusterEvent> dedupLastWins(List<ClusterEvent> upserts) {
        java.util.Map<ObjectRef, ClusterEvent> last = new java.util.LinkedHashMap<>();
        upserts.forEach(e -> last.put(((ObjectUpserted) e).ref(), e));
        List<ClusterEvent> out = new ArrayList<>(last.values());
        out.sort(java.util.Comparator.comparing(e -> ((ObjectUpserted) e).ref().key()));
        return out;
    }

    @Test
    void aCheckpointMissingAnObjectIsRefusedSayingWhichKindDiffers() {
        String text = Checkpoint.write(fold(log(new Random(3))), T);
        List<String> lines = new ArrayList<>(text.lines().toList());
        int service = indexOf(lines, "\"kind\":\"Service\"");
        lines.remove(service);
        Checkpoint.Read read = Checkpoint.read(C, String.join("\n", lines));
        assertThat(read)
                .isInstanceOfSatisfying(
                        Checkpoint.Read.Unusable.class,
                        u -> assertThat(u.reason())
                                .startsWith("it does not fold to the state it was written from: Services: ")
                                .contains(" here, "));
    }

    @Test
    void aLineTheDecoderRefusesOrAForeignOrMissingDigestMakesItUnusable() {
        String text = Checkpoint.write(fold(log(new Random(4))), T);
        List<String> lines = new ArrayList<>(text.lines().toList());

        List<String> garbled = new ArrayList<>(lines);
        garbled.set(3, "{\"v\":1,\"cluster\":\"prod\",\"type\":");
        assertThat(Checkpoint.read(C, String.join("\n", garbled)))
                .isInstanceOfSatisfying(
                        Checkpoint.Read.Unusable.class,
                        u -> assertThat(u.reason()).startsWith("line 4 is refused: "));

        assertThat(Checkpoint.read("staging", text))
                .isInstanceOfSatisfying(
                        Checkpoint.Read.Unusable.class,
                        u -> assertThat(u.reason()).isEqualTo("line 1 is of cluster prod"));

        assertThat(Checkpoint.read(C, String.join("\n", lines.subList(1, lines.size()))))
                .isInstanceOfSatisfying(
                        Checkpoint.Read.Unusable.class,
                        u -> assertThat(u.reason()).isEqualTo("it does not start with a state digest"));

        assertThat(Checkpoint.read(C, "")).isInstanceOf(Checkpoint.Read.Unusable.class);
    }

    @Test
    void aChangedSettingIsCaughtByTheDigest() {
        ObjectUpserted node = new ObjectUpserted(C, new Node("n1", "", List.of()), "1", T);
        String text = Checkpoint.write(fold(List.of(new SettingsChanged(C, ClusterSettings.DEFAULT, T), node)), T);
        String other = Checkpoint.write(fold(List.of(new SettingsChanged(C, MASQUERADE_ALL, T), node)), T);
        // The first head's digest over the second head's settings.
        String forged = text.lines().findFirst().orElseThrow() + "\n"
                + other.lines().skip(1).collect(Collectors.joining("\n"));
        assertThat(Checkpoint.read(C, forged))
                .isInstanceOfSatisfying(
                        Checkpoint.Read.Unusable.class,
                        u -> assertThat(u.reason()).endsWith("settings differ"));
    }

    @Test
    void aClusterWithoutAVersionHasNothingToCheckpoint() {
        ClusterHead head = ClusterHead.rebuilt(C, List.of(), 0, ClusterRules.EMPTY, null, Lineage.UNKNOWN);
        assertThatThrownBy(() -> Checkpoint.write(head, T))
                .hasMessage("cluster prod has no version: nothing to check point");
    }

    private static int indexOf(List<String> lines, String fragment) {
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).contains(fragment)) {
                return i;
            }
        }
        throw new AssertionError("no line holds " + fragment);
    }
}
