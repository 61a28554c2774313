package io.rulesync.cli.output;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * The api's diff of two versions as the text of a unified diff, which every operator reads at a glance: a header naming
 * the versions, one {@code @@} hunk per group of nodes that saw the same change, lines gained with {@code +} and lost
 * with {@code -}. Coloured on a terminal (red, green, cyan hunks), plain otherwise.
 */
public final class DiffText {
    private DiffText() {
    }

    public static String render(JsonNode diff, Terminal t) {
        StringBuilder out = new StringBuilder();
        String cluster = diff.path("cluster").asString("");
        out.append(t.bold("--- " + cluster + " version " + diff.path("from").asLong())).append('\n');
        out.append(t.bold("+++ " + cluster + " version " + diff.path("to").asLong())).append('\n');
        if (diff.has("mode")) {
            ipvs(out, diff, t);
        } else {
            chains(out, diff, t);
        }
        return out.toString();
    }

    private static void chains(StringBuilder out, JsonNode diff, Terminal t) {
        for (JsonNode group : diff.path("changes")) {
            out.append(t.cyan("@@ " + String.join(", ", strings(group.path("nodes"))) + ": " + group.path("change").asString("") + " @@"))
                    .append('\n');
            for (JsonNode family : group.path("families")) {
                for (JsonNode table : family.path("tables")) {
                    // As iptables-save writes them, so each line reads as the rule it is.
                    out.append(" *").append(table.path("table").asString("")).append(" (").append(family.path("family").asString(""))
                            .append(")\n");
                    for (JsonNode added : table.path("chainsAdded")) {
                        String chain = added.path("chain").asString("");
                        out.append(t.green("+:" + chain)).append('\n');
                        strings(added.path("rules")).forEach(r -> out.append(t.green("+-A " + chain + " " + r)).append('\n'));
                    }
                    strings(table.path("chainsRemoved")).forEach(c -> out.append(t.red("-:" + c)).append('\n'));
                    for (JsonNode changed : table.path("chainsChanged")) {
                        String chain = changed.path("chain").asString("");
                        if (changed.path("reordered").asBoolean()) {
                            out.append(" # ").append(chain).append(": the same rules, reordered\n");
                        }
                        strings(changed.path("rulesRemoved")).forEach(r -> out.append(t.red("--A " + chain + " " + r)).append('\n'));
                        strings(changed.path("rulesAdded")).forEach(r -> out.append(t.green("+-A " + chain + " " + r)).append('\n'));
                    }
                }
            }
        }
        List<String> unchanged = strings(diff.path("unchangedNodes"));
        if (diff.path("changes").isEmpty()) {
            out.append(" (no node's rules differ)\n");
        }
        if (!unchanged.isEmpty()) {
            out.append(" unchanged: ").append(String.join(", ", unchanged)).append('\n');
        }
    }

    private static void ipvs(StringBuilder out, JsonNode diff, Terminal t) {
        out.append(t.cyan("@@ " + diff.path("node").asString("") + " (" + diff.path("mode").asString("") + " mode): "
                + diff.path("change").asString("") + " @@")).append('\n');
        for (JsonNode f : diff.path("families")) {
            out.append(' ').append(f.path("family").asString("")).append('\n');
            strings(f.path("virtualServersAdded")).forEach(v -> out.append(t.green("+virtual server " + v)).append('\n'));
            strings(f.path("virtualServersRemoved")).forEach(v -> out.append(t.red("-virtual server " + v)).append('\n'));
            for (JsonNode c : f.path("virtualServersChanged")) {
                out.append(" virtual server ").append(c.path("virtualServer").asString("")).append('\n');
                if (!c.path("settingsBefore").asString("").equals(c.path("settingsAfter").asString(""))) {
                    out.append(t.red("-settings " + c.path("settingsBefore").asString(""))).append('\n');
                    out.append(t.green("+settings " + c.path("settingsAfter").asString(""))).append('\n');
                }
                strings(c.path("realServersRemoved")).forEach(r -> out.append(t.red("-real server " + r)).append('\n'));
                strings(c.path("realServersAdded")).forEach(r -> out.append(t.green("+real server " + r)).append('\n'));
            }
            for (JsonNode s : f.path("sets")) {
                out.append(" set ").append(s.path("set").asString("")).append('\n');
                strings(s.path("removed")).forEach(m -> out.append(t.red("-" + m)).append('\n'));
                strings(s.path("added")).forEach(m -> out.append(t.green("+" + m)).append('\n'));
            }
            strings(f.path("addressesUnbound")).forEach(a -> out.append(t.red("-kube-ipvs0 " + a)).append('\n'));
            strings(f.path("addressesBound")).forEach(a -> out.append(t.green("+kube-ipvs0 " + a)).append('\n'));
            strings(f.path("rulesRemoved")).forEach(r -> out.append(t.red("-" + r)).append('\n'));
            strings(f.path("rulesAdded")).forEach(r -> out.append(t.green("+" + r)).append('\n'));
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString("")));
        return out;
    }
}
