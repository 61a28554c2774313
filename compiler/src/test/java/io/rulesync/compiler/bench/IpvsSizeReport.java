package io.rulesync.compiler.bench;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.NodeRules;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.ipvs.IpvsCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.ipvs.IpvsPart;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Table;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The size of IPVS mode's rendering against iptables mode's for one node of the synthetic cluster
 * (SERVICES Services x ENDPOINTS endpoints, every 10th a NodePort, every 7th with ClientIP affinity),
 * and the time to compile and render each, after warming up: {@code bench/ipvs-size [SERVICES ENDPOINTS]}.
 */
public final class IpvsSizeReport {
    private IpvsSizeReport() {}

    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        ProxySettings settings =
                ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.64.0.0/10")));
        ClusterState state = SyntheticCluster.build(services, endpoints);

        IpvsRules ipvs = IpvsCompiler.compile(state, SyntheticCluster.NODE, settings, IpvsCompiler.DEFAULT_SCHEDULER);
        NodeRules iptables = IptablesCompiler.compile(state, SyntheticCluster.NODE, settings);
        long ipvsBytes = ipvs.ipvsadmRestore().length()
                + ipvs.ipsetRestore().length()
                + ipvs.iptablesRestore().length();
        int iptablesRules = 0;
        int iptablesChains = 0;
        for (Table t : Table.values()) {
            iptablesChains += iptables.ruleSet().chains(t).size();
            iptablesRules += iptables.ruleSet().chains(t).stream()
                    .mapToInt(c -> c.rules().size())
                    .sum();
        }
        System.out.printf("%,d Services x %,d endpoints, node %s%n", services, endpoints, SyntheticCluster.NODE);
        System.out.printf(
                "IPVS mode:     %,d virtual servers, %,d real servers, %,d ipset members in %d sets, %,d iptables rules "
                        + "(%d restore + %d jumps), %,d addresses on kube-ipvs0; %,d bytes of input%n",
                ipvs.virtualServers().size(),
                ipvs.realServerCount(),
                ipvs.setMemberCount(),
                ipvs.sets().size(),
                ipvs.iptablesRuleCount(),
                ipvs.natRules().size() + ipvs.filterRules().size(),
                IpvsRules.JUMPS.size(),
                ipvs.bound().size(),
                ipvsBytes);
        System.out.printf(
                "iptables mode: %,d rules in %,d chains; %,d bytes of input%n",
                iptablesRules, iptablesChains, iptables.render().length());

        double[] ipvsMs = time(10, () -> {
            IpvsRules r = IpvsCompiler.compile(state, SyntheticCluster.NODE, settings, IpvsCompiler.DEFAULT_SCHEDULER);
            return r.ipvsadmRestore().length()
                    + r.ipsetRestore().length()
                    + r.iptablesRestore().length();
        });
        double[] iptMs = time(
                10,
                () -> IptablesCompiler.compile(state, SyntheticCluster.NODE, settings)
                        .render()
                        .length());
        System.out.printf(
                "compile + render, median of 10 after 5 warm-ups: IPVS %.0f ms (min %.0f), iptables %.0f ms (min %.0f)%n",
                ipvsMs[ipvsMs.length / 2], ipvsMs[0], iptMs[iptMs.length / 2], iptMs[0]);

        // What carrying both modes in every fragment costs the versions: fragment text, a node's
        // snapshot, the cluster compile, and one node's IPVS assembly from its fragments.
        ClusterSettings cs =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.64.0.0/10")), false, 14, List.of());
        ClusterRules rules = ClusterCompiler.compile(state, cs).rules();
        long withIpvs = 0;
        long without = 0;
        Map<FragmentKey, RuleFragment> stripped = new TreeMap<>();
        for (Map.Entry<FragmentKey, RuleFragment> e : rules.fragments().entrySet()) {
            withIpvs += e.getValue().text().length();
            RuleFragment f = e.getValue().withIpvs(IpvsPart.EMPTY);
            without += f.text().length();
            stripped.put(e.getKey(), f);
        }
        ClusterRules iptablesOnly = ClusterRules.of(stripped, rules.nodes());
        long snapshot = new RulesSnapshot("c", 1, Instant.EPOCH, rules.forNode(SyntheticCluster.NODE))
                .toJson()
                .length();
        long snapshotIptables = new RulesSnapshot("c", 1, Instant.EPOCH, iptablesOnly.forNode(SyntheticCluster.NODE))
                .toJson()
                .length();
        System.out.printf(
                "fragments: %,d of them, %,d bytes of text with IPVS parts, %,d without (+%.0f%%); a node's snapshot %,d bytes, "
                        + "%,d without (+%.0f%%)%n",
                rules.fragments().size(),
                withIpvs,
                without,
                100.0 * (withIpvs - without) / without,
                snapshot,
                snapshotIptables,
                100.0 * (snapshot - snapshotIptables) / snapshotIptables);
        double[] cluster = time(
                5, () -> ClusterCompiler.compile(state, cs).rules().fragments().size());
        double[] assemble = time(
                10,
                () -> rules.ipvs(SyntheticCluster.NODE, IpFamily.IPV4)
                        .orElseThrow()
                        .virtualServers()
                        .size());
        System.out.printf(
                "cluster compile, both modes (median of 5): %.0f ms; one node's IPVS assembly from its fragments (median of 10): "
                        + "%.0f ms%n",
                cluster[cluster.length / 2], assemble[assemble.length / 2]);
    }

    private interface Work {
        long run() throws Exception;
    }

    private static double[] time(int runs, Work w) throws Exception {
        long sink = 0;
        for (int i = 0; i < 5; i++) {
            sink += w.run();
        }
        double[] ms = new double[runs];
        for (int i = 0; i < runs; i++) {
            long t0 = System.nanoTime();
            sink += w.run();
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        if (sink == 42) {
            System.out.println(); // keeps the work observable
        }
        return ms;
    }
}
