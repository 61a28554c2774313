package io.rulesync.agent.apply;

import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * What the other mode left in the packet filter when a node changes mode, removed as kube-proxy's
 * {@code CleanupLeftovers} does. It matters: iptables mode REJECTs traffic to a Service without
 * endpoints in its filter chains, and IPVS mode's KUBE-IPVS-FILTER rejects new connections to the
 * addresses of its old sets; kept, either would refuse traffic the new mode serves.
 *
 * <p>Only chains and jumps of the mode being left are named: the jumps it inserts into the built-in
 * chains that the new mode does not share, then its own chains (flushed, then deleted). Chains both
 * modes use (KUBE-SERVICES in nat, KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FORWARD, ...) are rewritten
 * by the new mode and stay. Pure script building from the kernel's listing, one restore per family.
 */
public final class Leftovers {
    /** IPVS mode's chains that iptables mode does not have. */
    private static final List<String> IPVS_ONLY_NAT = List.of("KUBE-NODE-PORT", "KUBE-LOAD-BALANCER");

    private static final List<String> IPVS_ONLY_FILTER =
            List.of("KUBE-NODE-PORT", "KUBE-SOURCE-RANGES-FIREWALL", "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER");

    private Leftovers() {}

    /** Removes iptables mode's leftovers before IPVS mode takes over; returns the number of chains and jumps removed. */
    public static int leaveIptablesMode(Netfilter nf) throws RestoreFailedException {
        return remove(
                nf,
                KubeJumps.of(nf.family()),
                KubeJumps.ipvs(),
                (t, c) -> OwnedChains.owns(t, c)
                        && !(t == Table.NAT ? IpvsRules.NAT_CHAINS : IpvsRules.FILTER_CHAINS).contains(c));
    }

    /** Removes IPVS mode's leftover chains and jumps before iptables mode takes over (its ipsets, virtual servers and kube-ipvs0 stay). */
    public static int leaveIpvsMode(Netfilter nf) throws RestoreFailedException {
        return remove(
                nf,
                KubeJumps.ipvs(),
                KubeJumps.of(nf.family()),
                (t, c) -> (t == Table.NAT ? IPVS_ONLY_NAT : IPVS_ONLY_FILTER).contains(c));
    }

    /**
     * Removes everything iptables and IPVS mode wrote in the packet filter before nftables mode takes over: all their
     * jumps and chains. Kept, iptables mode's DNAT would answer before the nftables table's.
     */
    public static int leaveForNftables(Netfilter nf) throws RestoreFailedException {
        List<KubeJumps.Jump> jumps = new ArrayList<>(KubeJumps.of(nf.family()));
        KubeJumps.ipvs().stream().filter(j -> !jumps.contains(j)).forEach(jumps::add);
        return remove(
                nf,
                jumps,
                List.of(),
                (t, c) -> OwnedChains.owns(t, c) || (t == Table.NAT ? IPVS_ONLY_NAT : IPVS_ONLY_FILTER).contains(c));
    }

    private static int remove(
            Netfilter nf, List<KubeJumps.Jump> jumps, List<KubeJumps.Jump> keep, BiPredicate<Table, String> gone)
            throws RestoreFailedException {
        String script = script(nf, jumps, keep, gone);
        if (script.isEmpty()) {
            return 0;
        }
        nf.restore(script);
        return (int) script.lines()
                .filter(l -> l.startsWith("-D ") || l.startsWith("-X "))
                .count();
    }

    /** The restore input that removes the leftovers the kernel holds; empty when there are none. */
    static String script(
            Netfilter nf, List<KubeJumps.Jump> jumps, List<KubeJumps.Jump> keep, BiPredicate<Table, String> gone) {
        StringBuilder out = new StringBuilder();
        for (Table t : Table.values()) {
            List<String> lines = new ArrayList<>();
            Set<String> builtins = new LinkedHashSet<>();
            jumps.stream().filter(j -> j.table() == t).forEach(j -> builtins.add(j.builtin()));
            for (String builtin : builtins) {
                List<String> held = nf.chain(t, builtin).orElse(List.of());
                for (KubeJumps.Jump j : jumps) {
                    if (j.table() != t || !j.builtin().equals(builtin) || keep.contains(j)) {
                        continue;
                    }
                    long copies = held.stream()
                            .filter(("-A " + builtin + " " + j.spec())::equals)
                            .count();
                    for (long i = 0; i < copies; i++) {
                        lines.add("-D " + builtin + " " + j.spec());
                    }
                }
            }
            List<String> chains = nf.chainNames(t).stream()
                    .filter(c -> gone.test(t, c))
                    .sorted()
                    .toList();
            chains.forEach(c -> lines.add(":" + c + " - [0:0]"));
            chains.forEach(c -> lines.add("-X " + c));
            if (!lines.isEmpty()) {
                out.append('*').append(t.restoreName()).append('\n');
                lines.forEach(l -> out.append(l).append('\n'));
                out.append("COMMIT\n");
            }
        }
        return out.toString();
    }
}
