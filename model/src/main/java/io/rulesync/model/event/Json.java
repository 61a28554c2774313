package io.rulesync.model.event;

import java.io.StringWriter;
import java.util.function.Consumer;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.SerializableString;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.io.CharacterEscapes;
import tools.jackson.core.io.SerializedString;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * rulesync's one configured Jackson mapper, and writing with it. What it writes is hashed, stored
 * and sent (events in Kafka and PostgreSQL, fingerprints, deltas, acks, snapshots), so it must stay
 * byte for byte what the hand-written writer before it made (GoldenWireTest pins it): insertion
 * order, lower-case six-character escapes for control characters but short ones for newline,
 * carriage return and tab, U+2028 and U+2029 escaped (JavaScript reads them as line ends),
 * {@code /} and the rest of Unicode as they are.
 */
public final class Json {
    /**
     * Also the reader: duplicate keys are refused (as the YAML parser before it did), and there is no
     * size limit, since a node's snapshot at 10k Services is ~46 MB of mostly one-line strings.
     */
    public static final JsonMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                    .characterEscapes(new WireEscapes())
                    .disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
                    .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(Integer.MAX_VALUE)
                            .maxDocumentLength(-1)
                            .maxTokenCount(-1)
                            .build())
                    .build())
            .build();

    private Json() {}

    /** Maps (in their iteration order), lists, strings, whole numbers, booleans and null, as JSON. */
    public static String write(Object value) {
        return MAPPER.writeValueAsString(value);
    }

    /** What {@code body} writes with a generator of {@link #MAPPER}, as text. */
    public static String generate(Consumer<JsonGenerator> body) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = MAPPER.createGenerator(out)) {
            body.accept(g);
        }
        return out.toString();
    }

    private static final class WireEscapes extends CharacterEscapes {
        private static final int[] ASCII = CharacterEscapes.standardAsciiEscapesForJSON();
        private static final SerializableString LINE_SEPARATOR = new SerializedString("\\u2028");
        private static final SerializableString PARAGRAPH_SEPARATOR = new SerializedString("\\u2029");

        static {
            // Only newline, carriage return and tab have short forms on the wire: backspace and form feed take six
            // characters.
            ASCII['\b'] = CharacterEscapes.ESCAPE_STANDARD;
            ASCII['\f'] = CharacterEscapes.ESCAPE_STANDARD;
            ASCII['/'] = CharacterEscapes.ESCAPE_NONE;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ASCII;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return ch == 0x2028 ? LINE_SEPARATOR : ch == 0x2029 ? PARAGRAPH_SEPARATOR : null;
        }
    }
}
