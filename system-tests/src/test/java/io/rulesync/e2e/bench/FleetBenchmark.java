package io.rulesync.e2e.bench;

import io.rulesync.agent.feed.Transport;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bench/fleet CLUSTERS SERVICES ENDPOINTS AGENTS_PER_CLUSTER RATE SECONDS [stream|api|kafka] [thin|full] [slow=CLUSTER/NODE] [replicas=2] [nokernel]}:
 * the propagation benchmark over many clusters. Every cluster has AGENTS_PER_CLUSTER agents, hollow but for the first
 * cluster's dry-run agent and real-kernel agent (a hollow one instead where this machine lacks root or iptables). RATE
 * changes a second go across the fleet, each to the next cluster in turn. On the stream transport the hollow agents are
 * thin ({@link ThinFleet}) unless {@code full} is given; {@code slow=} names one whose acks are late and reads throttled;
 * {@code replicas=2} runs a second api replica in a process of its own and kills it halfway through the steady phase;
 * {@code nokernel} puts a hollow agent in the real-kernel agent's place.
 */
public final class FleetBenchmark {
    private FleetBenchmark() {}

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
        Transport transport = Transport.STREAM;
        Boolean thin = null;
        String slow = null;
        boolean twoReplicas = false;
        boolean kernelAgent = true;
        for (int i = 6; i < args.length; i++) {
            switch (args[i]) {
                case "thin" -> thin = true;
                case "full" -> thin = false;
                case "replicas=2" -> twoReplicas = true;
                case "nokernel" -> kernelAgent = false;
                default -> {
                    if (args[i].startsWith("slow=")) {
                        slow = args[i].substring(5);
                    } else {
                        transport = Transport.parse(args[i]);
                    }
                }
            }
        }
        // The real-kernel agent's applies (iptables-restore into its namespace, ~190 ms each at 1,000 Services) compete
        // with the control plane for the cores: runs with and without it are not compared.
        boolean kernel = kernelAgent && PropagationBenchmark.kernelAvailable();
        if (kernelAgent && !kernel) {
            System.out.println("no real-kernel agent: needs root and iptables-restore (a hollow agent instead)");
        }
        List<PropagationBenchmark.Cluster> shape = new ArrayList<>();
        shape.add(new PropagationBenchmark.Cluster("fleet-0", 1, perCluster - (kernel ? 2 : 1), kernel));
        for (int c = 1; c < clusters; c++) {
            shape.add(new PropagationBenchmark.Cluster("fleet-" + c, 0, perCluster, false));
        }
        new PropagationBenchmark(transport, thin == null ? transport == Transport.STREAM : thin, slow, twoReplicas)
                .run(shape, n[1], n[2], n[4], n[5]);
        System.exit(0);
    }

    private static void usage(String problem) {
        System.err.println("bench/fleet: " + problem);
        System.err.println(
                "usage: bench/fleet CLUSTERS SERVICES ENDPOINTS AGENTS_PER_CLUSTER RATE SECONDS [stream|api|kafka] [thin|full] "
                        + "[slow=CLUSTER/NODE] [replicas=2] [nokernel]");
        System.exit(2);
    }
}
