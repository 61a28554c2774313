package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.Json;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The wire form of fragments and node changes, shared by deltas and snapshots, and the streaming
 * reader both are read with: a node's snapshot at 10k Services is tens of MB, read token by token
 * into the fragments themselves, with no tree of maps in between.
 */
final class FragmentJson {
    private FragmentJson() {}

    /** A field that is missing or of the wrong type; its message names it. */
    static final class WrongField extends IllegalArgumentException {
        WrongField(String message) {
            super(message);
        }
    }

    /** One fragment change as JSON; {@code after} null means removed. */
    static String fragment(FragmentKey key, RuleFragment after) {
        return Json.generate(g -> writeFragment(g, key, after));
    }

    static void writeFragment(JsonGenerator g, FragmentKey key, RuleFragment after) {
        g.writeStartObject();
        g.writeStringProperty("family", key.family().id());
        g.writeStringProperty("unit", key.unit().id());
        g.writeStringProperty("variant", key.variant().id());
        if (after == null) {
            g.writeBooleanProperty("removed", true);
        } else {
            g.writeStringProperty("hash", after.hash());
            g.writeStringProperty("rules", after.text());
        }
        g.writeEndObject();
    }

    static void writeNodes(JsonGenerator g, List<RulesDiff.NodeChange> changes) {
        g.writeStartArray();
        for (RulesDiff.NodeChange n : changes) {
            g.writeStartObject();
            g.writeStringProperty("node", n.node());
            if (n.zoneAfter() == null) {
                g.writeBooleanProperty("removed", true);
            } else {
                g.writeStringProperty("zone", n.zoneAfter());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /**
     * Reads the one JSON object {@code json} holds with {@code body}, which gets the parser at its
     * start and reads it whole ({@code for (String name = p.nextName(); name != null; ...)}). JSON
     * errors come out as {@link IllegalArgumentException}s saying {@code "<what> is not JSON"}.
     */
    static <T> T readObject(String json, String what, Function<JsonParser, T> body) {
        return readObject(() -> Json.MAPPER.createParser(json), what, body);
    }

    /** {@link #readObject(String, String, Function)} from UTF-8 bytes as they arrive; a failure to read them is "not JSON" too. */
    static <T> T readObject(java.io.InputStream json, String what, Function<JsonParser, T> body) {
        return readObject(() -> Json.MAPPER.createParser(json), what, body);
    }

    private static <T> T readObject(
            java.util.function.Supplier<JsonParser> open, String what, Function<JsonParser, T> body) {
        try (JsonParser p = open.get()) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException(what + " is not a JSON object");
            }
            T read = body.apply(p);
            if (p.nextToken() != null) {
                throw new IllegalArgumentException(
                        what + " is not JSON: more after its object at " + p.currentLocation());
            }
            return read;
        } catch (JacksonException e) {
            throw new IllegalArgumentException(
                    what + " is not JSON: " + e.getOriginalMessage() + " at " + e.getLocation(), e);
        }
    }

    static String text(JsonParser p, String field) {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw new WrongField(field + ": expected a string");
        }
        return p.getString();
    }

    static long whole(JsonParser p, String field) {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw new WrongField(field + ": expected a whole number");
        }
        return p.getLongValue();
    }

    /** True, false, or null for false. */
    static boolean flag(JsonParser p, String field) {
        return switch (p.currentToken()) {
            case VALUE_TRUE -> true;
            case VALUE_FALSE, VALUE_NULL -> false;
            default -> throw new WrongField(field + ": expected true or false");
        };
    }

    static <T> T required(T value, String field) {
        if (value == null) {
            throw new WrongField(field + ": missing");
        }
        return value;
    }

    /**
     * Reads fragment changes, the parser at the list. The "before" side is not on the wire (the
     * receiver has it), so they hold afters only; removals come back with an empty fragment as
     * "before". Every fragment's content must match its hash.
     */
    static List<RulesDiff.FragmentChange> readFragments(JsonParser p) {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new WrongField("fragments: expected a list");
        }
        List<RulesDiff.FragmentChange> fragments = new ArrayList<>();
        // Reused by every fragment's check: a snapshot has 10k of them.
        MessageDigest sha = RuleFragment.sha256();
        StringBuilder scratch = new StringBuilder();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            fragments.add(readFragment(p, "fragments[" + fragments.size() + "]", sha, scratch));
        }
        return fragments;
    }

    private static RulesDiff.FragmentChange readFragment(
            JsonParser p, String at, MessageDigest sha, StringBuilder scratch) {
        if (p.currentToken() != JsonToken.START_OBJECT) {
            throw new WrongField(at + ": expected an object");
        }
        String family = null;
        String unit = null;
        String variant = null;
        String hash = null;
        String rules = null;
        boolean removed = false;
        for (String name = p.nextName(); name != null; name = p.nextName()) {
            p.nextToken();
            switch (name) {
                case "family" -> family = text(p, at + ".family");
                case "unit" -> unit = text(p, at + ".unit");
                case "variant" -> variant = text(p, at + ".variant");
                case "removed" -> removed = flag(p, at + ".removed");
                case "hash" -> hash = text(p, at + ".hash");
                case "rules" -> rules = text(p, at + ".rules");
                default -> p.skipChildren();
            }
        }
        FragmentKey key = new FragmentKey(
                IpFamily.fromId(required(family, at + ".family")),
                Unit.parse(required(unit, at + ".unit")),
                Variant.parse(required(variant, at + ".variant")));
        if (removed) {
            return new RulesDiff.FragmentChange(key, RuleFragment.EMPTY, null);
        }
        RuleFragment after = RuleFragment.parse(required(rules, at + ".rules"));
        if (hash == null || !after.isReceivedAs(rules, hash, sha, scratch)) {
            throw new IllegalArgumentException(
                    "fragment " + key.unit().id() + " (" + key.variant().id() + "): content does not match its hash");
        }
        return new RulesDiff.FragmentChange(key, null, after);
    }

    /** Reads node changes, the parser at the list. */
    static List<RulesDiff.NodeChange> readNodes(JsonParser p) {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new WrongField("nodes: expected a list");
        }
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            String at = "nodes[" + nodes.size() + "]";
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw new WrongField(at + ": expected an object");
            }
            String node = null;
            String zone = null;
            boolean removed = false;
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                p.nextToken();
                switch (name) {
                    case "node" -> node = text(p, at + ".node");
                    // null as well as absent: a node without a zone after the change is removed.
                    case "zone" -> zone = p.currentToken() == JsonToken.VALUE_NULL ? null : text(p, at + ".zone");
                    case "removed" -> removed = flag(p, at + ".removed");
                    default -> p.skipChildren();
                }
            }
            nodes.add(new RulesDiff.NodeChange(required(node, at + ".node"), null, removed ? null : zone));
        }
        return nodes;
    }
}
