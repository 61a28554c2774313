package io.rulesync.compiler.checkpoint;

import io.rulesync.compiler.fold.ClusterFold;
import io.rulesync.compiler.fold.ClusterView;
import io.rulesync.compiler.fold.ProblemReports;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * A cluster's folded state written as the shortest log that folds to it: its settings, one upsert per
 * object it holds, and its current problem reports, one event per line in the events' own wire form
 * ({@link EventCodec}). A rebuild folds a checkpoint and then the events stored after it, instead of the
 * cluster's whole history, so its cost follows the cluster's size, not its age.
 *
 * <p>The first line is a {@link StateDigest} of the state the rest must fold to. Reading a checkpoint
 * folds it and checks that digest, so a checkpoint that no longer reads back as what was written (a
 * stricter decoder, a field the codec lost, a damaged row) is {@link Read.Unusable} with the reason,
 * and the caller replays the whole log instead: nothing stored is trusted without that check.
 *
 * <p>Objects are written by kind, each kind in name order, so equal states give byte-identical checkpoints.
 */
public final class Checkpoint {
    private Checkpoint() {}

    /** What reading a stored checkpoint gave. */
    public sealed interface Read {
        /** The events to fold in place of the history the checkpoint stands for. */
        record Usable(List<ClusterEvent> events) implements Read {
            public Usable {
                events = List.copyOf(events);
            }
        }

        /** Why the checkpoint cannot stand for the history (one phrase). */
        record Unusable(String reason) implements Read {}
    }

    /**
     * The checkpoint of {@code head}'s folded state, its events stamped {@code at}. The head must hold
     * facts (a version): a head of problem reports alone has nothing to check point.
     */
    public static String write(ClusterHead head, Instant at) {
        if (head.version() == 0) {
            throw new IllegalArgumentException("cluster " + head.cluster() + " has no version: nothing to check point");
        }
        String cluster = head.cluster();
        ClusterView view = head.view();
        StringBuilder out = new StringBuilder();
        line(out, digest(cluster, view, head.problems(), at));
        line(out, new SettingsChanged(cluster, view.settings(), at));
        // The state keeps each kind sorted by name: nodes, Services, then slices, in that order.
        List<ClusterObject> objects = new ArrayList<>(view.state().objectCount());
        objects.addAll(view.state().nodes());
        objects.addAll(view.state().services());
        objects.addAll(view.state().endpointSlices());
        for (ClusterObject o : objects) {
            line(out, new ObjectUpserted(cluster, o, "", at));
        }
        // The reports as received, with the time each source was first reported this way.
        head.problems().bySource().values().forEach(r -> line(out, r));
        return out.toString();
    }

    /** Reads a checkpoint of {@code cluster} back, folding it to check it against the digest it starts with. */
    public static Read read(String cluster, String text) {
        List<ClusterEvent> events = new ArrayList<>();
        StateDigest digest = null;
        int n = 0;
        for (String line : text.split("\n")) {
            n++;
            EventCodec.Decoded d = EventCodec.decode(line);
            if (d instanceof EventCodec.Decoded.Invalid i) {
                return new Read.Unusable("line " + n + " is refused: " + i.reason());
            }
            ClusterEvent e = ((EventCodec.Decoded.Valid) d).event();
            if (!e.cluster().equals(cluster)) {
                return new Read.Unusable("line " + n + " is of cluster " + e.cluster());
            }
            if (n == 1) {
                if (!(e instanceof StateDigest sd)) {
                    return new Read.Unusable("it does not start with a state digest");
                }
                digest = sd;
            } else {
                events.add(e);
            }
        }
        if (digest == null) {
            return new Read.Unusable("it is empty");
        }
        ClusterView view = ClusterFold.applyAll(ClusterView.EMPTY, events).view();
        List<String> differences = new ArrayList<>(digest.differences(view.state(), view.settings()));
        if (!digest.problems().equals(ProblemReports.NONE.applyAll(events).fingerprint())) {
            differences.add("problem reports differ");
        }
        if (!differences.isEmpty()) {
            return new Read.Unusable(
                    "it does not fold to the state it was written from: " + String.join("; ", differences));
        }
        return new Read.Usable(events);
    }

    private static StateDigest digest(String cluster, ClusterView view, ProblemReports problems, Instant at) {
        Map<ObjectKind, Fingerprint> objects = new EnumMap<>(ObjectKind.class);
        objects.put(ObjectKind.SERVICE, StateDigest.of(view.state().services()));
        objects.put(ObjectKind.ENDPOINT_SLICE, StateDigest.of(view.state().endpointSlices()));
        objects.put(ObjectKind.NODE, StateDigest.of(view.state().nodes()));
        return new StateDigest(cluster, objects, Fingerprint.of(view.settings()), problems.fingerprint(), at);
    }

    private static void line(StringBuilder out, ClusterEvent e) {
        out.append(EventCodec.encode(e)).append('\n');
    }
}
