package io.rulesync.agent.apply;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.List;

/**
 * kube-proxy's jumps from the built-in chains into its own (kube-proxy's iptables proxier,
 * {@code iptablesJumpChains}, plus kubelet's KUBE-FIREWALL jumps for IPv4), written as
 * {@code iptables -S} prints them so that the kernel's lines compare as text. kube-proxy ensures
 * each with {@code -C} then {@code -I 1}; the agent does the same from one read of each built-in
 * chain and also removes duplicates, so every jump exists exactly once.
 */
public final class KubeJumps {
    /** A jump rule in a built-in chain. */
    public record Jump(Table table, String builtin, String spec) {
        /** The rule's jump target. */
        public String target() {
            return spec.substring(spec.lastIndexOf("-j ") + 3);
        }
    }

    private static final String NEW = "-m conntrack --ctstate NEW ";

    private KubeJumps() {}

    /** In kube-proxy's order; each is inserted at position 1, so the last listed ends up first. */
    public static List<Jump> of(IpFamily family) {
        List<Jump> j = new ArrayList<>();
        j.add(filter(
                "INPUT", NEW + comment("kubernetes externally-visible service portals") + "-j KUBE-EXTERNAL-SERVICES"));
        j.add(filter(
                "FORWARD",
                NEW + comment("kubernetes externally-visible service portals") + "-j KUBE-EXTERNAL-SERVICES"));
        j.add(filter("INPUT", comment("kubernetes health check service ports") + "-j KUBE-NODEPORTS"));
        j.add(filter("FORWARD", NEW + comment("kubernetes service portals") + "-j KUBE-SERVICES"));
        j.add(filter("OUTPUT", NEW + comment("kubernetes service portals") + "-j KUBE-SERVICES"));
        j.add(filter("FORWARD", comment("kubernetes forwarding rules") + "-j KUBE-FORWARD"));
        j.add(filter("INPUT", NEW + comment("kubernetes load balancer firewall") + "-j KUBE-PROXY-FIREWALL"));
        j.add(filter("OUTPUT", NEW + comment("kubernetes load balancer firewall") + "-j KUBE-PROXY-FIREWALL"));
        j.add(filter("FORWARD", NEW + comment("kubernetes load balancer firewall") + "-j KUBE-PROXY-FIREWALL"));
        j.add(new Jump(Table.NAT, "OUTPUT", comment("kubernetes service portals") + "-j KUBE-SERVICES"));
        j.add(new Jump(Table.NAT, "PREROUTING", comment("kubernetes service portals") + "-j KUBE-SERVICES"));
        j.add(new Jump(Table.NAT, "POSTROUTING", comment("kubernetes postrouting rules") + "-j KUBE-POSTROUTING"));
        if (family == IpFamily.IPV4) {
            j.add(filter("INPUT", "-j KUBE-FIREWALL"));
            j.add(filter("OUTPUT", "-j KUBE-FIREWALL"));
        }
        return List.copyOf(j);
    }

    /** IPVS mode's jumps ({@link IpvsRules#JUMPS}), in kube-proxy's order of insertion. */
    public static List<Jump> ipvs() {
        return IpvsRules.JUMPS.stream()
                .map(j -> new Jump(j.table().equals("nat") ? Table.NAT : Table.FILTER, j.chain(), j.rule()))
                .toList();
    }

    /** The built-in chains that hold jumps, per table, without repeats. */
    public static List<Jump> builtins(IpFamily family) {
        return builtins(of(family));
    }

    /** The built-in chains that hold {@code jumps}, per table, without repeats. */
    public static List<Jump> builtins(List<Jump> jumps) {
        List<Jump> out = new ArrayList<>();
        for (Jump j : jumps) {
            if (out.stream()
                    .noneMatch(o -> o.table() == j.table() && o.builtin().equals(j.builtin()))) {
                out.add(j);
            }
        }
        return out;
    }

    /**
     * The restore lines that make every jump of {@code table} appear exactly once, given the
     * built-in chains' current lines as {@code iptables -S CHAIN} prints them. Empty when all is well.
     */
    public static List<String> edits(IpFamily family, Table table, java.util.Map<String, List<String>> builtinLines) {
        return edits(of(family), table, builtinLines);
    }

    /** The same for any list of jumps (IPVS mode's, say). */
    public static List<String> edits(List<Jump> jumps, Table table, java.util.Map<String, List<String>> builtinLines) {
        List<String> out = new ArrayList<>();
        for (Jump j : jumps) {
            if (j.table() != table) {
                continue;
            }
            String line = "-A " + j.builtin() + " " + j.spec();
            long count = builtinLines.getOrDefault(j.builtin(), List.of()).stream()
                    .filter(line::equals)
                    .count();
            if (count == 0) {
                out.add("-I " + j.builtin() + " 1 " + j.spec());
            }
            for (long extra = count; extra > 1; extra--) {
                out.add("-D " + j.builtin() + " " + j.spec());
            }
        }
        return out;
    }

    private static Jump filter(String builtin, String spec) {
        return new Jump(Table.FILTER, builtin, spec);
    }

    private static String comment(String text) {
        return "-m comment --comment \"" + text + "\" ";
    }
}
