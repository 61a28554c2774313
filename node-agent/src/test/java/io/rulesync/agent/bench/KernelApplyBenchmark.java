package io.rulesync.agent.bench;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.apply.NarrowedChange;
import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.compiler.cluster.CompiledCluster;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One real-kernel agent's apply cost on a node that holds SERVICES Services x ENDPOINTS endpoints:
 * the node is loaded version by version (CHUNK Services at a time, through the agent's own
 * incremental path, since a full restore of 10k Services takes ~36 minutes on this kernel), then
 * REPS one-endpoint changes are applied and timed: planning, the iptables-restore call, and the
 * read-back verification, separately.
 *
 * <p>{@code bench/agent-apply [SERVICES ENDPOINTS CHUNK REPS]}; needs root and iptables. It creates
 * a network namespace of its own and deletes it.
 */
public final class KernelApplyBenchmark {
    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int chunk = args.length > 2 ? Integer.parseInt(args[2]) : 1_000;
        int reps = args.length > 3 ? Integer.parseInt(args[3]) : 30;
        String ns = "rs-agent-bench-" + ProcessHandle.current().pid();
        run("ip", "netns", "add", ns);
        if (System.getenv("RULESYNC_BENCH_KEEP_NS") == null) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> run("ip", "netns", "del", ns)));
        } else {
            System.out.println("keeping network namespace " + ns + " (ip netns del " + ns + " removes it)");
        }
        IptablesNetfilter nf = new IptablesNetfilter(
                IpFamily.IPV4, HostCommand.PROCESSES.inNetns(ns), IptablesNetfilter.Printer.KERNEL_FORM);
        Applier applier = new Applier(List.of(nf));

        ClusterState full = SyntheticCluster.build(services, endpoints);
        RuleSet before = null;
        long loadStart = System.nanoTime();
        for (int n = Math.min(chunk, services); ; n = Math.min(n + chunk, services)) {
            ClusterState part = prefix(full, n);
            RuleSet next = rules(ClusterCompiler.compile(part, ClusterSettings.DEFAULT));
            long t0 = System.nanoTime();
            Applier.Outcome o =
                    applier.apply(before == null ? null : Map.of(IpFamily.IPV4, before), Map.of(IpFamily.IPV4, next));
            if (!o.ok()) {
                throw new IllegalStateException("loading " + n + " Services failed: " + o.error());
            }
            System.out.printf(
                    "loaded %6d Services: %6d restore lines in %8.1f ms (restore %8.1f ms)%n",
                    n, o.restoreLines(), (System.nanoTime() - t0) / 1e6, (double) o.restoreMillis());
            before = next;
            if (n == services) {
                break;
            }
        }
        System.out.printf(
                "node loaded with %d rules in %.1f s%n", before.ruleCount(), (System.nanoTime() - loadStart) / 1e9);

        CompiledCluster compiled = ClusterCompiler.compile(full, ClusterSettings.DEFAULT);
        ClusterState state = full;
        List<Double> plan = new ArrayList<>();
        List<Double> restore = new ArrayList<>();
        List<Double> total = new ArrayList<>();
        for (int r = 0; r < reps; r++) {
            int i = (r * 7919) % services;
            if (i % 13 == 12) {
                i++; // Services without endpoints stay so
            }
            state = state.withEndpointSlice(SyntheticCluster.slice(i, endpoints, r + 1));
            CompiledCluster.Update u =
                    compiled.update(state, ClusterSettings.DEFAULT, List.of(SyntheticCluster.serviceName(i)), false);
            // What the agent does with a delta: only the touched units' chains (and dispatch chains if their share
            // changed).
            long t1 = System.nanoTime();
            NarrowedChange n = NarrowedChange.of(
                    compiled.rules(), u.compiled().rules(), SyntheticCluster.NODE, IpFamily.IPV4, u.touched());
            RestorePlan p = RestorePlan.between(n.before(), n.after());
            long t2 = System.nanoTime();
            Applier.Outcome o = applier.apply(Map.of(IpFamily.IPV4, n.before()), Map.of(IpFamily.IPV4, n.after()));
            long t3 = System.nanoTime();
            if (!o.ok()) {
                throw new IllegalStateException("one-endpoint change failed: " + o.error());
            }
            plan.add((t2 - t1) / 1e6);
            restore.add((double) o.restoreMillis());
            total.add((t3 - t2) / 1e6);
            if (r == 0) {
                System.out.println("one-endpoint restore input (" + p.lines() + " lines):\n" + p.script());
            }
            compiled = u.compiled();
        }
        System.out.println("one-endpoint change on a node holding " + services + " Services (" + reps + " reps, ms):");
        System.out.println("  plan (touched units' chains):       " + summary(plan));
        System.out.println("  iptables-restore --noflush:          " + summary(restore));
        System.out.println("  apply incl. read-back verification:  " + summary(total));
    }

    private static RuleSet rules(CompiledCluster c) {
        return c.rules().ruleSet(SyntheticCluster.NODE, IpFamily.IPV4).orElseThrow();
    }

    /** The first n Services with their slices, and all nodes. */
    private static ClusterState prefix(ClusterState full, int n) {
        List<Service> svcs = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            NamespacedName name = SyntheticCluster.serviceName(i);
            full.service(name).ifPresent(svcs::add);
        }
        java.util.Set<NamespacedName> kept = new java.util.HashSet<>();
        svcs.forEach(v -> kept.add(v.name()));
        for (EndpointSlice s : full.endpointSlices()) {
            if (kept.contains(new NamespacedName(s.name().namespace(), s.serviceName()))) {
                slices.add(s);
            }
        }
        List<Node> nodes = new ArrayList<>(full.nodes());
        return ClusterState.of(svcs, slices, nodes);
    }

    static String summary(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        return String.format(
                "p50 %.1f, p90 %.1f, p99 %.1f, max %.1f",
                s.get(s.size() / 2),
                s.get((int) (s.size() * 0.9)),
                s.get(Math.min(s.size() - 1, (int) Math.ceil(s.size() * 0.99) - 1)),
                s.get(s.size() - 1));
    }

    private static void run(String... cmd) {
        try {
            new ProcessBuilder(cmd).inheritIO().start().waitFor();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
