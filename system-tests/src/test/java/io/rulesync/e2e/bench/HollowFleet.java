package io.rulesync.e2e.bench;

import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.feed.ApiSnapshots;
import io.rulesync.agent.feed.Transport;
import io.rulesync.agent.mode.HollowMode;
import io.rulesync.agent.rules.FragmentCheck;
import io.rulesync.client.ApiClient;
import io.rulesync.e2e.AgentTokens;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Hollow agents in a process of their own, as kubemark runs hollow nodes apart from the control plane: started by
 * {@link PropagationBenchmark} under {@code nice -n 19}, so that their own work (parsing and checking every delta, a
 * few ms each) uses the cores the control plane leaves, instead of starving its single-threaded parts. The parent
 * times acks where PostgreSQL records them. Runs until its stdin closes, or ends with status 3 when an agent dies.
 *
 * <p>Arguments: API_URL TOKEN TRANSPORT KAFKA_BOOTSTRAP STREAMS CLUSTER:FIRST:COUNT..., each the nodes node-FIRST on of a
 * cluster.
 */
public final class HollowFleet {
    private HollowFleet() {}

    public static void main(String[] args) throws Exception {
        URI api = URI.create(args[0]);
        AgentTokens tokens = AgentTokens.of(args[1]); // each node's own token, made from the benchmark's secret
        Transport transport = Transport.parse(args[2]);
        String bootstrap = args[3];
        String streams = args[4];
        List<String[]> clusters = new ArrayList<>();
        for (int i = 5; i < args.length; i++) {
            clusters.add(args[i].split(":"));
        }
        Path state = Files.createTempDirectory("rulesync-hollow-fleet");
        // Each real agent warms its own JIT on its own node; here a thousand share one, and cold they would queue for
        // its
        // compiler (snapshots hashed and parsed interpreted, minutes of it): so warm it once, then start every agent at
        // once.
        long w0 = System.nanoTime();
        // One cluster's snapshot only: another cluster's first snapshot is a build in the api that the cold start
        // measures.
        String[] c0 = clusters.get(0);
        ApiClient warm = new ApiClient(api, tokens.token(c0[0], "node-" + c0[1]), ApiClient.newHttpClient());
        for (int i = 0; i < 20; i++) {
            FragmentCheck.refusal(new ApiSnapshots(warm)
                    .latest(c0[0], "node-" + c0[1])
                    .rules()
                    .fragments());
        }
        System.out.printf("warmed in %.1f s%n", (System.nanoTime() - w0) / 1e9);
        System.out.flush();
        List<AgentLoop> loops = new ArrayList<>();
        AgentClients clients = new AgentClients();
        for (String[] c : clusters) {
            int first = Integer.parseInt(c[1]);
            for (int i = 0; i < Integer.parseInt(c[2]); i++) {
                String node = "node-" + (first + i);
                String token = tokens.token(c[0], node);
                ApiClient connection = clients.next(api, token);
                loops.add(PropagationBenchmark.config(bootstrap, api, c[0], token, node, state, transport, streams)
                        .loop(connection, new ApiSnapshots(connection), new HollowMode(), ack -> {})
                        .start());
            }
        }
        System.out.println("started " + loops.size());
        System.out.flush();
        Thread watchdog = new Thread(
                () -> {
                    while (true) {
                        for (AgentLoop l : loops) {
                            if (l.died() != null) {
                                System.out.println("agent " + l.agent().node() + " died: " + l.died());
                                System.out.flush();
                                Runtime.getRuntime().halt(3);
                            }
                        }
                        try {
                            Thread.sleep(1000);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "fleet-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        while (System.in.read() != -1) {
            // the parent keeps stdin open while it wants the fleet
        }
        // Nothing of a hollow agent outlives the run: closing a thousand one by one took minutes.
        Runtime.getRuntime().halt(0);
    }
}
