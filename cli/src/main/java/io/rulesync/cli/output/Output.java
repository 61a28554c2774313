package io.rulesync.cli.output;

import io.rulesync.model.event.Json;
import java.io.PrintWriter;
import java.util.Locale;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import org.snakeyaml.engine.v2.common.FlowStyle;
import tools.jackson.databind.JsonNode;

/**
 * Where a command's answer goes and in which form: a table (or text) for people, or the api's answer itself as JSON or
 * YAML for scripts ({@code -o json}, {@code -o yaml}), which stays stable whatever the table shows.
 */
public final class Output {
    public enum Format {
        TABLE,
        JSON,
        YAML
    }

    private final Format format;
    private final Terminal terminal;
    private final PrintWriter out;

    public Output(String format, Terminal terminal, PrintWriter out) {
        this.format = Format.valueOf(format.toUpperCase(Locale.ROOT));
        this.terminal = terminal;
        this.out = out;
    }

    public Terminal terminal() {
        return terminal;
    }

    /** Whether a script asked for the api's answer rather than a table. */
    public boolean structured() {
        return format != Format.TABLE;
    }

    /** Prints {@code answer} as JSON or YAML, as asked. */
    public void structured(JsonNode answer) {
        if (format == Format.YAML) {
            out.print(yaml(answer));
        } else {
            out.println(Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(answer));
        }
        out.flush();
    }

    /** {@code tree} as block YAML, as {@code -o yaml} prints it. */
    public static String yaml(JsonNode tree) {
        return new Dump(DumpSettings.builder()
                        .setDefaultFlowStyle(FlowStyle.BLOCK)
                        .build())
                .dumpToString(Json.MAPPER.convertValue(tree, Object.class));
    }

    public void table(Table t) {
        out.print(t.render(terminal.width()));
        out.flush();
    }

    public void text(String s) {
        out.print(s.endsWith("\n") || s.isEmpty() ? s : s + "\n");
        out.flush();
    }
}
