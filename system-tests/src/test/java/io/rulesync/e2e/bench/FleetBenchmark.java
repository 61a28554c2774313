package io.rulesync.e2e.bench;

import io.rulesync.agent.feed.Transport;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bench/fleet CLUSTERS SERVICES ENDPOINTS AGENTS_PER_CLUSTER RATE SECONDS [api|kafka]}: the propagation benchmark
 * over many clusters (issue 16's "100 clusters × 10 agents"). Every cluster has AGENTS_PER_CLUSTER agents, hollow but
 * for the first cluster's dry-run agent and real-kernel agent (a hollow one instead where this machine lacks root or
 * iptables). RATE changes a second go across the fleet, each to the next cluster in turn.
 */
public final class FleetBenchmark {
    private FleetBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int[] n = new int[6];
        try {
            for (int i = 0; i < n.length; i++) {
                n[i] = Integer.parseInt(args[i]);
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            usage("six whole numbers first");
        }
        int clusters = n[0];
        int perCluster = n[3];
        if (clusters < 1 || perCluster < 2 || n[1] < 1 || n[2] < 1 || n[4] < 1 || n[5] < 1) {
            usage("every number must be at least 1, AGENTS_PER_CLUSTER at least 2 (the first cluster's full agents)");
        }
        boolean kernel = PropagationBenchmark.kernelAvailable();
        if (!kernel) {
            System.out.println("no real-kernel agent: needs root and iptables-restore (a hollow agent instead)");
        }
        List<PropagationBenchmark.Cluster> shape = new ArrayList<>();
        shape.add(new PropagationBenchmark.Cluster("fleet-0", 1, perCluster - (kernel ? 2 : 1), kernel));
        for (int c = 1; c < clusters; c++) {
            shape.add(new PropagationBenchmark.Cluster("fleet-" + c, 0, perCluster, false));
        }
        Transport transport = args.length > 6 ? Transport.parse(args[6]) : Transport.API;
        new PropagationBenchmark(transport).run(shape, n[1], n[2], n[4], n[5]);
        System.exit(0);
    }

    private static void usage(String problem) {
        System.err.println("bench/fleet: " + problem);
        System.err.println("usage: bench/fleet CLUSTERS SERVICES ENDPOINTS AGENTS_PER_CLUSTER RATE SECONDS [api|kafka]");
        System.exit(2);
    }
}
