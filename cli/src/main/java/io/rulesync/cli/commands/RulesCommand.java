package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(
        name = "rules",
        description =
                "A node's exact iptables-restore input at a version (with --mode ipvs: its ipvsadm-restore, "
                        + "ipset and iptables inputs; with --mode nftables: the nft -f input of its kube-proxy table). Always text: -o does not apply.")
final class RulesCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(names = "--node", required = true, paramLabel = "NODE")
    String node;

    @Option(
            names = "--version",
            paramLabel = "VERSION",
            defaultValue = "latest",
            description = "A version number, or latest (default).")
    String version;

    @Option(names = "--mode", paramLabel = "MODE", description = "iptables (default), ipvs or nftables.")
    String mode;

    @Option(names = "--family", paramLabel = "FAMILY", description = "ipv4 or ipv6 (default: the cluster's first).")
    String family;

    @Override
    int run(ApiConnection api, Output out) {
        out.text(api.get(cluster(cluster) + "/versions/" + ApiConnection.encode(version) + "/rules?node="
                        + ApiConnection.encode(node) + (mode == null ? "" : "&mode=" + ApiConnection.encode(mode))
                        + (family == null ? "" : "&family=" + ApiConnection.encode(family)))
                .body());
        return 0;
    }
}
