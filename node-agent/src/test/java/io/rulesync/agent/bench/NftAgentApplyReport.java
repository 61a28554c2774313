package io.rulesync.agent.bench;

import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.agent.mode.NftablesMode;
import io.rulesync.agent.nftables.NftCommand;
import io.rulesync.agent.plan.NodeView;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.nftables.NftDelta;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * One agent's nftables mode on this host's kernel and {@code nft}, at scale: versions of a synthetic cluster compiled
 * by the real compiler, applied by {@link NftablesMode} with the {@code nft} tool in a network namespace of its own
 * (deleted after): the first one loaded whole, then one-endpoint changes and new Services, each timed as the agent
 * applies it (the table assembled from the version's fragments, the partial transactions, and the read-back of what
 * they wrote). Also the agent's own CPU per version: assembling the node's table and the delta, without {@code nft}.
 *
 * <p>Usage: {@code bench/nft-agent [SERVICES [ENDPOINTS [RUNS]]]} (default 10000 10 3). Needs root and nft.
 */
public final class NftAgentApplyReport {
    private NftAgentApplyReport() {}

    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String ns = "rs-nftagent-" + ProcessHandle.current().pid();
        run(HostCommand.PROCESSES, "ip", "netns", "add", ns);
        try {
            CommandRunner inNs = HostCommand.PROCESSES.inNetns(ns);
            // As the agent runs: chains and elements alone as netlink messages, the rest through nft.
            KernelMode mode = new NftablesMode(
                    SyntheticCluster.NODE,
                    new NftCommand(inNs, ns, true),
                    List.of(IpFamily.IPV4),
                    new Conntrack(inNs, true),
                    List.of(),
                    java.time.Clock.systemUTC());
            ClusterState state = SyntheticCluster.build(services, endpoints);
            NodeView current = view(state, 1);
            long t = System.nanoTime();
            check(mode.apply(null, current, null));
            System.out.printf(
                    "%,d Services x %d endpoints, agent's first apply (the table whole, read back): %.1f s%n",
                    services, endpoints, (System.nanoTime() - t) / 1e9);
            double[] moved = new double[runs];
            double[] added = new double[runs];
            double[] empty = new double[runs];
            double[] cpu = new double[runs];
            long version = 1;
            for (int r = 0; r < runs; r++) {
                state = state.withEndpointSlice(SyntheticCluster.slice(r * 101 % services, endpoints, r + 1));
                NodeView next = view(state, ++version);
                long c = System.nanoTime();
                NftTransaction before = current.rules()
                        .nftables(SyntheticCluster.NODE, IpFamily.IPV4)
                        .orElseThrow();
                NftTransaction after = next.rules()
                        .nftables(SyntheticCluster.NODE, IpFamily.IPV4)
                        .orElseThrow();
                NftDelta.between(before, after);
                cpu[r] = (System.nanoTime() - c) / 1e9 / 2; // two tables assembled: the agent keeps the one before
                moved[r] = timed(mode, current, next);
                current = next;
                int fresh = services + 1 + r;
                state = state.withService(SyntheticCluster.service(fresh))
                        .withEndpointSlice(SyntheticCluster.slice(fresh, endpoints, 0));
                next = view(state, ++version);
                added[r] = timed(mode, current, next);
                current = next;
                int noEndpoints = services + 1000 + r;
                state = state.withService(SyntheticCluster.service(noEndpoints));
                next = view(state, ++version);
                empty[r] = timed(mode, current, next);
                current = next;
            }
            print("one endpoint moved, as the agent applies it", moved);
            print("a new Service with " + endpoints + " endpoints, as the agent applies it", added);
            print("a new Service without endpoints (map elements only), as the agent applies it", empty);
            print("the agent's CPU for one version: the node's table assembled", cpu);
            String chain = current.rules().nftables(SyntheticCluster.NODE, IpFamily.IPV4).orElseThrow().ops().stream()
                    .filter(op -> op instanceof io.rulesync.model.nftables.NftOp.AddChain a
                            && a.name().startsWith("service-"))
                    .map(op -> ((io.rulesync.model.nftables.NftOp.AddChain) op).name())
                    .findFirst()
                    .orElseThrow();
            long c = System.nanoTime();
            new NftCommand(inNs).chains(IpFamily.IPV4, List.of(chain));
            System.out.printf("one chain read back (nft -j list chain): %.1f s%n", (System.nanoTime() - c) / 1e9);
            c = System.nanoTime();
            var check = mode.verify(current);
            System.out.printf(
                    "a check (the whole table read and compared): %.1f s, %d problems%n",
                    (System.nanoTime() - c) / 1e9, check.problems().size());
        } finally {
            run(HostCommand.PROCESSES, "ip", "netns", "delete", ns);
        }
    }

    private static NodeView view(ClusterState state, long version) {
        ClusterRules rules =
                ClusterCompiler.compile(state, ClusterSettings.DEFAULT).rules().forNode(SyntheticCluster.NODE);
        return new NodeView("bench", SyntheticCluster.NODE, version, rules, Lineage.UNKNOWN);
    }

    private static double timed(KernelMode mode, NodeView from, NodeView to) {
        long t = System.nanoTime();
        check(mode.apply(from, to, null));
        return (System.nanoTime() - t) / 1e9;
    }

    private static void check(KernelMode.Applied a) {
        if (!a.ok()) {
            throw new IllegalStateException(a.error());
        }
    }

    private static void run(CommandRunner runner, String... argv) throws Exception {
        CommandRunner.Result r = runner.run(List.of(argv), null, Duration.ofMinutes(1));
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + r.stderr());
        }
    }

    private static void print(String what, double[] s) {
        double[] sorted = s.clone();
        Arrays.sort(sorted);
        System.out.printf(
                "%-70s median %.3f s (min %.3f, max %.3f, %d runs)%n",
                what, sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1], sorted.length);
    }
}
