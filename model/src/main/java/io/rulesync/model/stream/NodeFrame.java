package io.rulesync.model.stream;

import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.event.Json;
import io.rulesync.model.rules.Lineage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * What a node writes to its stream: where to resume, and its acks, in band, as an Envoy node's next request carries its
 * acknowledgement. One JSON object per message.
 */
public sealed interface NodeFrame {
    int FORMAT = 1;
    /** An agent keeps at most 100 unsent acks; a frame never needs more. */
    int MAX_ACKS = 100;

    /**
     * Send the versions after {@code after}: the version the node runs, on a new stream or after a snapshot, with that
     * version's {@link Lineage} (so that the api can tell a version of another history and send a snapshot instead).
     */
    record Resume(long after, String lineage) implements NodeFrame {
        public Resume {
            if (after < 0) {
                throw new IllegalArgumentException("after: " + after + " is negative");
            }
            lineage = Lineage.check("lineage", lineage);
        }

        public Resume(long after) {
            this(after, Lineage.UNKNOWN);
        }
    }

    /** The node's acks, oldest first. */
    record Acks(List<NodeAck> acks) implements NodeFrame {
        public Acks {
            acks = List.copyOf(acks);
            if (acks.isEmpty() || acks.size() > MAX_ACKS) {
                throw new IllegalArgumentException("acks: expected 1-" + MAX_ACKS + ", got " + acks.size());
            }
        }
    }

    default byte[] bytes() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", FORMAT);
        if (this instanceof Resume r) {
            m.put("type", "resume");
            m.put("after", r.after());
            if (!r.lineage().isEmpty()) {
                m.put("lineage", r.lineage());
            }
            return Json.write(m).getBytes(StandardCharsets.UTF_8);
        }
        // Each ack in its own wire form, as POST .../acks carries it.
        return Json.generate(g -> {
                    g.writeStartObject();
                    g.writeNumberProperty("v", FORMAT);
                    g.writeStringProperty("type", "acks");
                    g.writeArrayPropertyStart("acks");
                    for (NodeAck a : ((Acks) this).acks()) {
                        a.write(g);
                    }
                    g.writeEndArray();
                    g.writeEndObject();
                })
                .getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a frame; a problem names the field (and the ack) at fault.
     *
     * @throws IllegalArgumentException what is wrong
     */
    static NodeFrame read(byte[] frame) {
        JsonNode m;
        try {
            m = Json.MAPPER.readTree(frame);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage());
        }
        if (m == null || !m.isObject() || m.path("v").asInt(-1) != FORMAT) {
            throw new IllegalArgumentException(
                    "v: frame format " + (m == null ? null : m.get("v")) + " is not supported");
        }
        String type = m.path("type").asString("");
        switch (type) {
            case "resume" -> {
                JsonNode after = m.get("after");
                if (after == null || !after.isIntegralNumber() || !after.canConvertToLong()) {
                    throw new IllegalArgumentException("after: not a whole number");
                }
                JsonNode lineage = m.get("lineage");
                if (lineage != null && !lineage.isString()) {
                    throw new IllegalArgumentException("lineage: not a string");
                }
                return new Resume(after.longValue(), lineage == null ? Lineage.UNKNOWN : lineage.asString());
            }
            case "acks" -> {
                JsonNode list = m.get("acks");
                if (list == null || !list.isArray() || list.isEmpty() || list.size() > MAX_ACKS) {
                    throw new IllegalArgumentException("acks: expected a list of 1-" + MAX_ACKS + " acks");
                }
                List<NodeAck> acks = new ArrayList<>(list.size());
                for (int i = 0; i < list.size(); i++) {
                    try {
                        acks.add(NodeAck.fromJson(list.get(i)));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("acks[" + i + "]: " + e.getMessage());
                    }
                }
                return new Acks(acks);
            }
            default -> throw new IllegalArgumentException("type: '" + type + "' is not resume or acks");
        }
    }
}
