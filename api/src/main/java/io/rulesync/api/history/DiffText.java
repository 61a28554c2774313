package io.rulesync.api.history;

import io.rulesync.api.history.HistoryController.ChainChanges;
import io.rulesync.api.history.HistoryController.ChangedNodes;
import io.rulesync.api.history.HistoryController.FamilyChanges;
import io.rulesync.api.history.HistoryController.IpvsFamilyChanges;
import io.rulesync.api.history.HistoryController.NftFamilyChanges;
import io.rulesync.api.history.HistoryController.TableChanges;
import java.util.List;

/**
 * A diff of two versions (or of a version and a plan) as the text of a unified diff, rendered once here for every reader
 * (the command line colours it on a terminal, the dashboard by the same first characters): a header naming both sides
 * ({@code cluster version N}), one {@code @@} hunk per
 * group of nodes that saw the same change, lines gained with {@code +} and lost with {@code -}, and notes (lines
 * starting with a space) for what has no line of its own.
 */
public final class DiffText {
    private DiffText() {}

    public static String chains(String from, String to, List<ChangedNodes> changes, List<String> unchanged) {
        StringBuilder out = header(from, to);
        hunks(out, changes, unchanged);
        return out.toString();
    }

    /** The hunks of {@link #chains} without its header, for a text that starts with more than the diff. */
    public static void hunks(StringBuilder out, List<ChangedNodes> changes, List<String> unchanged) {
        for (ChangedNodes group : changes) {
            out.append("@@ ")
                    .append(String.join(", ", group.nodes()))
                    .append(": ")
                    .append(group.change())
                    .append(" @@\n");
            if (group.change().equals("joined")) {
                out.append(" (new nodes: every rule of theirs is new; a node's rules show them)\n");
            } else if (group.change().equals("left")) {
                out.append(" (these nodes left the cluster: nothing is published to them)\n");
            }
            for (FamilyChanges family : group.families()) {
                for (TableChanges table : family.tables()) {
                    // As iptables-save writes them, so each line reads as the rule it is.
                    out.append(" *")
                            .append(table.table())
                            .append(" (")
                            .append(family.family())
                            .append(")\n");
                    for (VersionDiff.ChainRules added : table.chainsAdded()) {
                        out.append("+:").append(added.chain()).append('\n');
                        added.rules()
                                .forEach(r -> out.append("+-A ")
                                        .append(added.chain())
                                        .append(' ')
                                        .append(r)
                                        .append('\n'));
                    }
                    table.chainsRemoved()
                            .forEach(c -> out.append("-:").append(c).append('\n'));
                    for (ChainChanges changed : table.chainsChanged()) {
                        if (changed.reordered()) {
                            out.append(" # ").append(changed.chain()).append(": the same rules, reordered\n");
                        }
                        changed.rulesRemoved()
                                .forEach(r -> out.append("--A ")
                                        .append(changed.chain())
                                        .append(' ')
                                        .append(r)
                                        .append('\n'));
                        changed.rulesAdded()
                                .forEach(r -> out.append("+-A ")
                                        .append(changed.chain())
                                        .append(' ')
                                        .append(r)
                                        .append('\n'));
                    }
                }
            }
        }
        if (changes.isEmpty()) {
            out.append(" (no node's rules differ)\n");
        }
        if (!unchanged.isEmpty()) {
            out.append(" unchanged: ").append(String.join(", ", unchanged)).append('\n');
        }
    }

    public static String ipvs(
            String from, String to, String node, String mode, String change, List<IpvsFamilyChanges> families) {
        StringBuilder out = header(from, to);
        ipvsHunk(out, node, mode, change, families);
        return out.toString();
    }

    /** The hunk of {@link #ipvs} without its header. */
    public static void ipvsHunk(
            StringBuilder out, String node, String mode, String change, List<IpvsFamilyChanges> families) {
        out.append("@@ ")
                .append(node)
                .append(" (")
                .append(mode)
                .append(" mode): ")
                .append(change)
                .append(" @@\n");
        for (IpvsFamilyChanges f : families) {
            out.append(' ').append(f.family()).append('\n');
            f.virtualServersAdded()
                    .forEach(v -> out.append("+virtual server ").append(v).append('\n'));
            f.virtualServersRemoved()
                    .forEach(v -> out.append("-virtual server ").append(v).append('\n'));
            for (IpvsVersionDiff.ChangedServer c : f.virtualServersChanged()) {
                out.append(" virtual server ").append(c.virtualServer()).append('\n');
                if (!java.util.Objects.equals(c.settingsBefore(), c.settingsAfter())) {
                    out.append("-settings ").append(c.settingsBefore()).append('\n');
                    out.append("+settings ").append(c.settingsAfter()).append('\n');
                }
                c.realServersRemoved()
                        .forEach(r -> out.append("-real server ").append(r).append('\n'));
                c.realServersAdded()
                        .forEach(r -> out.append("+real server ").append(r).append('\n'));
            }
            for (IpvsVersionDiff.SetChange s : f.sets()) {
                out.append(" set ").append(s.set()).append('\n');
                s.removed().forEach(m -> out.append('-').append(m).append('\n'));
                s.added().forEach(m -> out.append('+').append(m).append('\n'));
            }
            f.addressesUnbound()
                    .forEach(a -> out.append("-kube-ipvs0 ").append(a).append('\n'));
            f.addressesBound().forEach(a -> out.append("+kube-ipvs0 ").append(a).append('\n'));
            f.rulesRemoved().forEach(r -> out.append('-').append(r).append('\n'));
            f.rulesAdded().forEach(r -> out.append('+').append(r).append('\n'));
        }
    }

    public static String nftables(String from, String to, String node, String change, List<NftFamilyChanges> families) {
        StringBuilder out = header(from, to);
        nftablesHunk(out, node, change, families);
        return out.toString();
    }

    /** The hunk of {@link #nftables} without its header: the table's lines lost and gained, per family. */
    public static void nftablesHunk(StringBuilder out, String node, String change, List<NftFamilyChanges> families) {
        out.append("@@ ")
                .append(node)
                .append(" (nftables mode): ")
                .append(change)
                .append(" @@\n");
        for (NftFamilyChanges f : families) {
            out.append(' ').append(f.family()).append('\n');
            f.removed().forEach(l -> out.append('-').append(l).append('\n'));
            f.added().forEach(l -> out.append('+').append(l).append('\n'));
        }
    }

    /** How a header names one side: {@code shop version 12}. */
    public static String version(String cluster, long version) {
        return cluster + " version " + version;
    }

    public static StringBuilder header(String from, String to) {
        return new StringBuilder("--- ")
                .append(from)
                .append('\n')
                .append("+++ ")
                .append(to)
                .append('\n');
    }
}
