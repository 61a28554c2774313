package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.connect.CliFailure;
import io.rulesync.cli.connect.ExitCode;
import picocli.CommandLine.Option;

/** Whose changes a diff or a plan shows, and in which mode: the options {@code diff} and {@code plan} share. */
final class DiffScope {
    @Option(names = "--node", paramLabel = "NODE", description = "Only this node's changes.")
    String node;

    @Option(
            names = "--mode",
            paramLabel = "MODE",
            description =
                    "ipvs: the node's IPVS mode changes (needs --node); "
                            + "nftables: the lines of its kube-proxy table that change (needs --node); iptables: its iptables rules only.")
    String mode;

    /** The query parameters these options add ({@code &node=...&mode=...}, or nothing). */
    String query() {
        if (("ipvs".equals(mode) || "nftables".equals(mode)) && node == null) {
            throw new CliFailure(ExitCode.USAGE, "--mode " + mode + " compares one node's rules: give --node");
        }
        return (node == null ? "" : "&node=" + ApiConnection.encode(node))
                + (mode == null ? "" : "&mode=" + ApiConnection.encode(mode));
    }

    /** {@code path} with {@code query} ({@code &a=b&c=d}, possibly empty) as its query string. */
    static String withQuery(String path, String query) {
        return query.isEmpty() ? path : path + "?" + query.substring(1);
    }
}
