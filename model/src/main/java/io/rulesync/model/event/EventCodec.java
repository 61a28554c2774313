package io.rulesync.model.event;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent.ListingStarted;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.ProblemSync;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.Problem;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;

/**
 * The wire form of cluster events: one JSON object per event, with a format version {@code v}.
 * Objects travel as reduced manifests ({@link ManifestEncoder}) and are validated on the way in by
 * {@link ManifestDecoder}, so a malformed event is refused with the same precise reasons as a
 * malformed file, and nothing unvalidated reaches the compiler.
 */
public final class EventCodec {
    public static final int FORMAT = 1;
    /** Larger payloads are refused before parsing (Kafka's default message limit is 1 MiB). */
    public static final int MAX_BYTES = 4 * 1024 * 1024;

    /** The result of reading one event. */
    public sealed interface Decoded {
        record Valid(ClusterEvent event) implements Decoded {}

        /** Not an event rulesync can use, and why: goes to the dead-letter topic. */
        record Invalid(String reason) implements Decoded {}
    }

    private EventCodec() {}

    public static String encode(ClusterEvent event) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", FORMAT);
        m.put("cluster", event.cluster());
        m.put("type", event.type().wireName());
        putFields(m, event);
        m.put("observedAt", event.observedAt().toString());
        return Json.write(m);
    }

    /**
     * The event's own fields, one case per type: a switch expression, so a new type does not compile until it is
     * written here.
     */
    private static Map<String, Object> putFields(Map<String, Object> m, ClusterEvent event) {
        return switch (event.type()) {
            case UPSERT -> {
                ObjectUpserted u = (ObjectUpserted) event;
                m.put("kind", u.ref().kind().apiName());
                m.put("key", u.ref().key());
                m.put("resourceVersion", u.resourceVersion());
                m.put("object", ManifestEncoder.encode(u.object()));
                yield m;
            }
            case DELETE -> {
                ObjectDeleted d = (ObjectDeleted) event;
                m.put("kind", d.ref().kind().apiName());
                m.put("key", d.ref().key());
                m.put("resourceVersion", d.resourceVersion());
                yield m;
            }
            case SYNC -> {
                SyncMarker s = (SyncMarker) event;
                m.put("kind", s.kind().apiName());
                m.put("keys", s.sortedKeys());
                yield m;
            }
            case LISTING -> m;
            case SETTINGS -> {
                m.put("settings", settingsMap(((SettingsChanged) event).settings()));
                yield m;
            }
            case DIGEST -> {
                StateDigest d = (StateDigest) event;
                Map<String, Object> objects = new LinkedHashMap<>();
                for (ObjectKind k : ObjectKind.values()) {
                    Fingerprint f = d.objects().get(k);
                    if (f != null) {
                        objects.put(k.apiName(), fingerprint(f));
                    }
                }
                m.put("objects", objects);
                m.put("settings", d.settings() == null ? null : d.settings().sum());
                if (d.problems() != null) {
                    m.put("problems", fingerprint(d.problems()));
                }
                yield m;
            }
            case PROBLEMS -> {
                ProblemsReported r = (ProblemsReported) event;
                m.put("source", r.source());
                m.put("problems", problemMaps(r.problems()));
                yield m;
            }
            case PROBLEM_SYNC -> {
                m.put("sources", ((ProblemSync) event).sortedSources());
                yield m;
            }
            case ROLLBACK -> {
                RollbackRequested r = (RollbackRequested) event;
                m.put("actionId", r.actionId());
                m.put("toVersion", r.toVersion());
                m.put("actor", r.actor());
                m.put("reason", r.reason());
                yield m;
            }
            case RESUME -> {
                ResumeRequested r = (ResumeRequested) event;
                m.put("actionId", r.actionId());
                m.put("actor", r.actor());
                m.put("reason", r.reason());
                yield m;
            }
        };
    }

    private static Map<String, Object> fingerprint(Fingerprint f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("count", f.count());
        m.put("sum", f.sum());
        return m;
    }

    /** Problems in their JSON shape: {@code [{"source":..., "object":..., "field":..., "message":...}]}. */
    public static List<Map<String, Object>> problemMaps(List<Problem> problems) {
        List<Map<String, Object>> out = new ArrayList<>(problems.size());
        for (Problem p : problems) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("source", p.source());
            m.put("object", p.object());
            m.put("field", p.field());
            m.put("message", p.message());
            out.add(m);
        }
        return out;
    }

    /** Settings in their JSON shape (also stored with every version). */
    public static Map<String, Object> settingsMap(ClusterSettings st) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("families", st.families().stream().map(IpFamily::id).toList());
        settings.put(
                "clusterCIDRs", st.clusterCidrs().stream().map(Cidr::toString).toList());
        settings.put("masqueradeAll", st.masqueradeAll());
        settings.put("masqueradeBit", st.masqueradeBit());
        settings.put(
                "nodePortAddresses",
                st.nodePortAddresses().stream().map(Cidr::toString).toList());
        settings.put("ipvsScheduler", st.ipvsScheduler());
        return settings;
    }

    /**
     * JSON into plain maps, lists and scalars, the shape {@link ManifestDecoder} reads from files too (so every
     * way in is validated by the same code). Jackson, with duplicate keys refused, not the YAML parser the files
     * need: it reads the same documents about ten times faster, and a rebuild reads every stored event.
     */
    private static final ObjectReader READER =
            Json.MAPPER.readerFor(Object.class).with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    public static Decoded decode(String json) {
        if (json == null) {
            return new Decoded.Invalid("empty message");
        }
        if (json.length() > MAX_BYTES) {
            return new Decoded.Invalid("message of " + json.length() + " characters exceeds " + MAX_BYTES);
        }
        Object parsed;
        try {
            parsed = READER.readValue(json);
        } catch (JacksonException e) {
            return new Decoded.Invalid("not JSON: "
                    + e.getOriginalMessage().replaceAll("\\s+", " ").strip()
                    + (e.getLocation() == null
                            ? ""
                            : " (at character " + e.getLocation().getCharOffset() + ")"));
        }
        if (!(parsed instanceof Map<?, ?> map)) {
            return new Decoded.Invalid("not a JSON object");
        }
        try {
            return new Decoded.Valid(event(map));
        } catch (IllegalArgumentException | ClassCastException | NullPointerException | DateTimeParseException e) {
            return new Decoded.Invalid(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        }
    }

    private static ClusterEvent event(Map<?, ?> m) {
        Object v = m.get("v");
        if (!(v instanceof Integer i) || i != FORMAT) {
            throw new IllegalArgumentException("v: format " + v + " is not supported (expected " + FORMAT + ")");
        }
        String cluster = text(m, "cluster");
        Instant observedAt = Instant.parse(text(m, "observedAt"));
        String type = text(m, "type");
        ClusterEvent.Type t = ClusterEvent.Type.ofWireName(type)
                .orElseThrow(() ->
                        new IllegalArgumentException("type: '" + type + "' is not " + ClusterEvent.Type.wireNames()));
        return switch (t) {
            case UPSERT -> {
                ObjectRef ref = new ObjectRef(ObjectKind.fromApiName(text(m, "kind")), text(m, "key"));
                if (!(m.get("object") instanceof Map<?, ?> object)) {
                    throw new IllegalArgumentException("object: expected a Kubernetes object");
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> content = (Map<String, Object>) object;
                ManifestDecoder.Decoded d = ManifestDecoder.decode(new ManifestDocument("", content));
                if (d instanceof ManifestDecoder.Decoded.Rejected r) {
                    throw new IllegalArgumentException(
                            r.problems().stream().map(Problem::toString).collect(Collectors.joining("; ")));
                }
                if (!(d instanceof ManifestDecoder.Decoded.Accepted a)) {
                    throw new IllegalArgumentException("object: not a Service, EndpointSlice or Node");
                }
                ClusterObject o = a.object();
                if (!ObjectRef.of(o).equals(ref)) {
                    throw new IllegalArgumentException("object is " + ObjectRef.of(o) + " but the event names " + ref);
                }
                yield new ObjectUpserted(cluster, o, optionalText(m, "resourceVersion"), observedAt);
            }
            case DELETE -> {
                yield new ObjectDeleted(
                        cluster,
                        new ObjectRef(ObjectKind.fromApiName(text(m, "kind")), text(m, "key")),
                        optionalText(m, "resourceVersion"),
                        observedAt);
            }
            case SYNC -> {
                yield new SyncMarker(
                        cluster, ObjectKind.fromApiName(text(m, "kind")), Set.copyOf(strings(m, "keys")), observedAt);
            }
            case LISTING -> {
                yield new ListingStarted(cluster, observedAt);
            }
            case SETTINGS -> {
                if (!(m.get("settings") instanceof Map<?, ?> s)) {
                    throw new IllegalArgumentException("settings: expected an object");
                }
                List<IpFamily> families =
                        strings(s, "families").stream().map(IpFamily::fromId).toList();
                Object bit = s.get("masqueradeBit");
                Object all = s.get("masqueradeAll");
                if (!(bit instanceof Integer b) || !(all instanceof Boolean a)) {
                    throw new IllegalArgumentException(
                            "settings: masqueradeBit must be a number and masqueradeAll a boolean");
                }
                // Absent in events written before IPVS mode: those clusters ran the default.
                Object scheduler = s.containsKey("ipvsScheduler")
                        ? s.get("ipvsScheduler")
                        : ClusterSettings.DEFAULT_IPVS_SCHEDULER;
                if (!(scheduler instanceof String sched)) {
                    throw new IllegalArgumentException("settings: ipvsScheduler must be a string");
                }
                yield new SettingsChanged(
                        cluster,
                        new ClusterSettings(
                                families, cidrs(s, "clusterCIDRs"), a, b, cidrs(s, "nodePortAddresses"), sched),
                        observedAt);
            }
            case DIGEST -> {
                if (!(m.get("objects") instanceof Map<?, ?> objects)) {
                    throw new IllegalArgumentException("objects: expected an object");
                }
                Map<ObjectKind, Fingerprint> fingerprints = new EnumMap<>(ObjectKind.class);
                for (Map.Entry<?, ?> e : objects.entrySet()) {
                    ObjectKind kind = ObjectKind.fromApiName(String.valueOf(e.getKey()));
                    if (!(e.getValue() instanceof Map<?, ?> f)) {
                        throw new IllegalArgumentException("objects." + kind.apiName() + ": expected {count, sum}");
                    }
                    fingerprints.put(kind, Fingerprint.parse(number(f, "count"), text(f, "sum")));
                }
                Fingerprint settings = m.get("settings") == null ? null : Fingerprint.parse(1, text(m, "settings"));
                Fingerprint problems = null;
                if (m.get("problems") != null) {
                    if (!(m.get("problems") instanceof Map<?, ?> f)) {
                        throw new IllegalArgumentException("problems: expected {count, sum}");
                    }
                    problems = Fingerprint.parse(number(f, "count"), text(f, "sum"));
                }
                yield new StateDigest(cluster, fingerprints, settings, problems, observedAt);
            }
            case PROBLEMS -> {
                if (!(m.get("problems") instanceof List<?> list)) {
                    throw new IllegalArgumentException("problems: expected a list");
                }
                if (list.size() > ProblemsReported.MAX_PROBLEMS) {
                    throw new IllegalArgumentException(
                            "problems: " + list.size() + " are more than " + ProblemsReported.MAX_PROBLEMS);
                }
                List<Problem> problems = new ArrayList<>(list.size());
                for (int n = 0; n < list.size(); n++) {
                    if (!(list.get(n) instanceof Map<?, ?> p)) {
                        throw new IllegalArgumentException(
                                "problems[" + n + "]: expected {source, object, field, message}");
                    }
                    problems.add(
                            new Problem(text(p, "source"), text(p, "object"), text(p, "field"), text(p, "message")));
                }
                yield new ProblemsReported(cluster, text(m, "source"), problems, observedAt);
            }
            case PROBLEM_SYNC -> {
                yield new ProblemSync(cluster, Set.copyOf(strings(m, "sources")), observedAt);
            }
            case ROLLBACK -> {
                yield new RollbackRequested(
                        cluster,
                        number(m, "actionId"),
                        number(m, "toVersion"),
                        text(m, "actor"),
                        text(m, "reason"),
                        observedAt);
            }
            case RESUME -> {
                yield new ResumeRequested(
                        cluster, number(m, "actionId"), text(m, "actor"), text(m, "reason"), observedAt);
            }
        };
    }

    private static long number(Map<?, ?> m, String field) {
        if (m.get(field) instanceof Integer i) {
            return i;
        }
        if (m.get(field) instanceof Long l) {
            return l;
        }
        throw new IllegalArgumentException(field + ": expected a whole number");
    }

    private static String text(Map<?, ?> m, String field) {
        if (!(m.get(field) instanceof String s)) {
            throw new IllegalArgumentException(field + ": expected a string");
        }
        return storable(field, s);
    }

    /** No Kubernetes field holds a NUL, and PostgreSQL cannot store one in text: a record carrying one would fail its batch. */
    private static String storable(String field, String s) {
        if (s.indexOf(0) >= 0) {
            throw new IllegalArgumentException(field + ": contains a NUL character (\\u0000)");
        }
        return s;
    }

    private static String optionalText(Map<?, ?> m, String field) {
        return m.get(field) == null ? "" : text(m, field);
    }

    private static List<String> strings(Map<?, ?> m, String field) {
        if (!(m.get(field) instanceof List<?> l)) {
            throw new IllegalArgumentException(field + ": expected a list");
        }
        List<String> out = new ArrayList<>(l.size());
        for (Object o : l) {
            if (!(o instanceof String s)) {
                throw new IllegalArgumentException(field + ": expected strings");
            }
            storable(field, s);
            out.add(s);
        }
        return out;
    }

    private static List<Cidr> cidrs(Map<?, ?> m, String field) {
        return strings(m, field).stream().map(Cidr::parse).toList();
    }
}
