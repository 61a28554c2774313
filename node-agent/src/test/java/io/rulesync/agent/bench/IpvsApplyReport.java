package io.rulesync.agent.bench;

import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.ipvs.BoundAddresses;
import io.rulesync.agent.ipvs.IpsetSync;
import io.rulesync.agent.ipvs.IpvsApplier;
import io.rulesync.agent.ipvs.MemoryIpvs;
import io.rulesync.agent.plan.ipvs.Draining;
import io.rulesync.agent.plan.ipvs.IpsetPlan;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The agent's side of IPVS mode at SERVICES Services x ENDPOINTS endpoints, for one node: the IPVS
 * plan (pure) from an empty table, with nothing to change, and after one Service's endpoints moved;
 * and the ipsets for real in a network namespace of its own (needs root and ipset): first load,
 * a check that finds nothing to do, and one changed member (one swap of the largest set).
 * The IPVS table itself is in memory: this kernel has none. {@code bench/ipvs-apply [SERVICES ENDPOINTS]}.
 */
public final class IpvsApplyReport {
    private IpvsApplyReport() {}

    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        ClusterSettings settings =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.64.0.0/10")), false, 14, List.of());
        ClusterState state = SyntheticCluster.build(services, endpoints);
        ClusterRules v1 = ClusterCompiler.compile(state, settings).rules();
        IpvsRules rules = v1.ipvs(SyntheticCluster.NODE, IpFamily.IPV4).orElseThrow();
        ClusterState moved = state.withEndpointSlice(SyntheticCluster.slice(17, endpoints, 1));
        ClusterRules v2 = ClusterCompiler.compile(moved, settings).rules();
        IpvsRules next = v2.ipvs(SyntheticCluster.NODE, IpFamily.IPV4).orElseThrow();
        System.out.printf(
                "%,d Services x %,d endpoints, node %s: %,d virtual servers, %,d real servers, %,d set members%n",
                services,
                endpoints,
                SyntheticCluster.NODE,
                rules.virtualServers().size(),
                rules.realServerCount(),
                rules.setMemberCount());

        Instant now = Instant.parse("2026-11-29T12:00:00Z");
        Duration drain = IpvsPlan.DEFAULT_DRAIN_TIMEOUT;
        MemoryIpvs kernel = new MemoryIpvs();
        long t0 = System.nanoTime();
        IpvsPlan first =
                IpvsPlan.plan(IpFamily.IPV4, rules.virtualServers(), kernel.list(), Draining.none(), now, drain);
        double firstMs = ms(t0);
        kernel.run(first.commands());
        double[] idle = new double[7];
        double[] change = new double[7];
        int changeCommands = 0;
        for (int i = 0; i < idle.length; i++) {
            var listing = kernel.list();
            t0 = System.nanoTime();
            IpvsPlan p = IpvsPlan.plan(IpFamily.IPV4, rules.virtualServers(), listing, Draining.none(), now, drain);
            idle[i] = ms(t0);
            if (!p.isEmpty()) {
                throw new IllegalStateException("a plan against its own result is not empty: "
                        + p.commands().get(0).line());
            }
            t0 = System.nanoTime();
            IpvsPlan c = IpvsPlan.plan(IpFamily.IPV4, next.virtualServers(), listing, Draining.none(), now, drain);
            change[i] = ms(t0);
            changeCommands = c.commands().size();
        }
        java.util.Arrays.sort(idle);
        java.util.Arrays.sort(change);
        System.out.printf(
                "IPVS plan: from an empty table %.0f ms (%,d commands); nothing to change %.0f ms; one Service's endpoints "
                        + "moved %.0f ms (%d commands) (medians of 7)%n",
                firstMs, first.commands().size(), idle[3], change[3], changeCommands);

        String ns = "rs-bench-ipset-" + UUID.randomUUID().toString().substring(0, 6);
        run("ip", "netns", "add", ns);
        try {
            IpsetSync sync = new IpsetSync(HostCommand.PROCESSES.inNetns(ns));
            t0 = System.nanoTime();
            IpsetPlan load = sync.sync(rules);
            double loadMs = ms(t0);
            t0 = System.nanoTime();
            IpsetPlan none = sync.sync(rules);
            double noneMs = ms(t0);
            t0 = System.nanoTime();
            IpsetPlan one = sync.update(rules, next);
            double oneMs = ms(t0);
            t0 = System.nanoTime();
            IpsetPlan back = sync.sync(rules);
            double backMs = ms(t0);
            System.out.printf(
                    "ipsets (real, in a namespace): first load %.0f ms (%d sets created, %,d lines); a check that finds nothing "
                            + "to do %.0f ms (reads %,d members back); one Service's endpoints moved, per-version path %.0f ms (%s patched, "
                            + "%d lines); the same change found by a check %.0f ms (%s patched)%n",
                    loadMs,
                    load.created().size(),
                    load.script().lines().count(),
                    noneMs,
                    rules.setMemberCount(),
                    oneMs,
                    one.patched(),
                    one.script().lines().count(),
                    backMs,
                    back.patched());
        } finally {
            run("ip", "netns", "delete", ns);
        }

        // The agent's whole IPVS apply, in a fresh namespace: ipsets, iptables and kube-ipvs0's
        // 10,000 addresses for real (a veth named kube-ipvs0: this kernel has no dummy driver), the
        // IPVS table in memory. Per version: assemble the node's configuration from its fragments, apply.
        ns = "rs-bench-ipvs-" + UUID.randomUUID().toString().substring(0, 6);
        run("ip", "netns", "add", ns);
        try {
            run(
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "ip",
                    "link",
                    "add",
                    BoundAddresses.DEVICE,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    "kipvs-peer");
            IptablesNetfilter.Printer printer = IptablesNetfilter.Printer.KERNEL_FORM;
            IpvsApplier applier = new IpvsApplier(
                    List.of(new IptablesNetfilter(IpFamily.IPV4, HostCommand.PROCESSES.inNetns(ns), printer)),
                    new MemoryIpvs(),
                    new IpsetSync(HostCommand.PROCESSES.inNetns(ns)),
                    new BoundAddresses(HostCommand.PROCESSES.inNetns(ns)),
                    drain,
                    List.of());
            t0 = System.nanoTime();
            IpvsApplier.Outcome full = applier.apply(Map.of(IpFamily.IPV4, rules), now, false);
            double fullMs = ms(t0);
            check(full);
            double[] version = new double[10];
            for (int i = 0; i < version.length; i++) {
                ClusterRules target = i % 2 == 0 ? v2 : v1;
                t0 = System.nanoTime();
                IpvsRules r = target.ipvs(SyntheticCluster.NODE, IpFamily.IPV4).orElseThrow();
                check(applier.apply(Map.of(IpFamily.IPV4, r), now, false));
                version[i] = ms(t0);
            }
            java.util.Arrays.sort(version);
            double[] checks = new double[3];
            for (int i = 0; i < checks.length; i++) {
                t0 = System.nanoTime();
                IpvsApplier.Outcome o = applier.apply(Map.of(IpFamily.IPV4, rules), now, true);
                checks[i] = ms(t0);
                check(o);
            }
            java.util.Arrays.sort(checks);
            System.out.printf(
                    "agent, whole IPVS apply: first %.0f ms (%,d changes); a version moving one Service's endpoints %.0f ms "
                            + "median, %.0f max of 10 (assembly from fragments included); a check with nothing to repair %.0f ms median of 3%n",
                    fullMs, full.changes(), version[version.length / 2], version[version.length - 1], checks[1]);
        } finally {
            run("ip", "netns", "delete", ns);
        }
    }

    private static void check(IpvsApplier.Outcome o) {
        if (!o.ok()) {
            throw new IllegalStateException(o.error());
        }
    }

    private static double ms(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    private static void run(String... argv) throws Exception {
        CommandRunner.Result r = HostCommand.PROCESSES.run(List.of(argv), null, Duration.ofSeconds(30));
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + r.stderr());
        }
    }
}
