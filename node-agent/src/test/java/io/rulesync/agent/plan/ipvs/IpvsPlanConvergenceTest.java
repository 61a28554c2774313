package io.rulesync.agent.plan.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.DRAIN;
import static io.rulesync.agent.ipvs.IpvsFixtures.T0;
import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.ipvs.IpvsFixtures;
import io.rulesync.agent.ipvs.MemoryIpvs;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Seeded random histories of desired states and traffic, applied to the memory kernel: every plan
 * applies without a refusal, is idempotent, serves exactly the desired real servers (the only extra
 * ones are draining TCP ones at weight 0), and once draining ends the kernel holds exactly the
 * desired virtual and real servers.
 */
class IpvsPlanConvergenceTest {
    private static final List<String> SCHEDULERS = List.of("rr", "wrr", "lc", "mh");
    private static final int SEEDS = 300;

    /** How many plans drained something, deleted a draining server, and edited a service: the histories must do all. */
    private int drains;

    private int drainedAway;
    private int edits;

    @Test
    void plansConvergeToTheDesiredServers() throws Exception {
        for (long seed = 1; seed <= SEEDS; seed++) {
            history(seed);
        }
        assertThat(drains).as("plans that put a real server to drain").isGreaterThan(SEEDS);
        assertThat(drainedAway).as("draining real servers deleted").isGreaterThan(SEEDS / 2);
        assertThat(edits).as("service edits").isGreaterThan(SEEDS);
    }

    private void history(long seed) throws Exception {
        Random r = new Random(seed);
        MemoryIpvs kernel = new MemoryIpvs();
        // A foreign family's server must survive every plan.
        VirtualServer v6 = IpvsFixtures.tcp("fd00:10:96::1", 80, IpvsFixtures.rs("fd00:10:244::1", 80));
        kernel.run(List.of(
                new IpvsCommand.AddService(v6),
                new IpvsCommand.AddReal(ServiceId.of(v6), v6.realServers().get(0))));
        Draining draining = Draining.none();
        Instant now = T0;
        List<VirtualServer> desired = List.of();
        int rounds = 2 + r.nextInt(7);
        for (int round = 0; round < rounds; round++) {
            String at = "seed " + seed + " round " + round;
            desired = randomDesired(r);
            traffic(kernel, r);
            IpvsPlan plan = IpvsPlan.plan(IpFamily.IPV4, desired, kernel.list(), draining, now, DRAIN);
            kernel.run(plan.commands()); // throws on any refusal
            drains += plan.draining().size() > draining.size() ? 1 : 0;
            edits += (int) plan.commands().stream()
                    .filter(c -> c instanceof IpvsCommand.EditService)
                    .count();
            draining = plan.draining();
            assertThat(IpvsPlan.plan(IpFamily.IPV4, desired, kernel.list(), draining, now, DRAIN)
                            .commands())
                    .as(at + ": idempotent")
                    .isEmpty();
            assertServes(kernel, desired, draining, at);
            now = now.plus(Duration.ofMinutes(r.nextInt(12)));
        }
        // Let draining end: either the connections stop or the deadlines pass.
        boolean byTime = r.nextBoolean();
        for (int i = 0; i < 3 && !draining.isEmpty(); i++) {
            if (byTime) {
                now = now.plus(DRAIN);
            } else {
                for (KernelVirtualServer k : kernel.list()) {
                    for (KernelRealServer rs : k.realServers()) {
                        kernel.setConnections(k.service(), rs.address(), rs.port(), 0, 0);
                    }
                }
            }
            IpvsPlan plan = IpvsPlan.plan(IpFamily.IPV4, desired, kernel.list(), draining, now, DRAIN);
            kernel.run(plan.commands());
            drainedAway += draining.size() - plan.draining().size();
            draining = plan.draining();
        }
        String at = "seed " + seed + " at the end";
        assertThat(draining.isEmpty()).as(at).isTrue();
        Map<ServiceId, KernelVirtualServer> held = byId(kernel.list());
        assertThat(held.remove(ServiceId.of(v6)))
                .as(at + ": the other family's server")
                .isNotNull();
        assertThat(held.keySet())
                .as(at)
                .containsExactlyElementsOf(
                        desired.stream().map(ServiceId::of).sorted().toList());
        for (VirtualServer w : desired) {
            KernelVirtualServer k = held.get(ServiceId.of(w));
            assertThat(k.sameSettings(w)).as(at + " " + w.key()).isTrue();
            assertThat(k.realServers())
                    .as(at + " " + w.key())
                    .containsExactlyElementsOf(w.realServers().stream()
                            .map(x -> new KernelRealServer(
                                    x.address(),
                                    x.port(),
                                    "Masq",
                                    1,
                                    connections(k, x).activeConnections(),
                                    connections(k, x).inactiveConnections()))
                            .toList());
        }
    }

    /** Desired servers are in the kernel with their settings and weight 1; any other real server drains. */
    private static void assertServes(MemoryIpvs kernel, List<VirtualServer> desired, Draining draining, String at) {
        Map<ServiceId, KernelVirtualServer> held = byId(kernel.list());
        held.keySet().removeIf(id -> id.address().family() == IpFamily.IPV6);
        assertThat(held.keySet())
                .as(at)
                .containsExactlyElementsOf(
                        desired.stream().map(ServiceId::of).sorted().toList());
        for (VirtualServer w : desired) {
            KernelVirtualServer k = held.get(ServiceId.of(w));
            assertThat(k.sameSettings(w)).as(at).isTrue();
            for (KernelRealServer rs : k.realServers()) {
                boolean wanted = w.realServers().stream()
                        .anyMatch(x -> x.address().equals(rs.address()) && x.port() == rs.port());
                if (wanted) {
                    assertThat(rs.weight()).as(at + " " + rs.text()).isEqualTo(1);
                } else {
                    assertThat(k.service().protocol())
                            .as(at + " only TCP drains")
                            .isEqualTo(Protocol.TCP);
                    assertThat(rs.weight()).as(at + " draining " + rs.text()).isZero();
                    assertThat(draining.deadline(k.service(), rs.address(), rs.port()))
                            .as(at + " " + rs.text())
                            .isPresent();
                }
            }
            assertThat(w.realServers())
                    .allMatch(x -> k.realServers().stream()
                            .anyMatch(y -> y.address().equals(x.address()) && y.port() == x.port()));
        }
        assertThat(draining.deadlines().keySet()).allMatch(d -> held.containsKey(d.service()));
    }

    private static List<VirtualServer> randomDesired(Random r) {
        List<VirtualServer> out = new ArrayList<>();
        for (int vip = 1; vip <= 3; vip++) {
            for (Protocol p : Protocol.values()) {
                if (r.nextInt(3) == 0) {
                    continue;
                }
                List<RealServer> reals = new ArrayList<>();
                for (int e = 1; e <= 5; e++) {
                    if (r.nextBoolean()) {
                        reals.add(new RealServer(ip("10.244.0." + e), 8080, 1));
                    }
                }
                out.add(new VirtualServer(
                        ip("10.96.0." + vip),
                        80,
                        p,
                        SCHEDULERS.get(r.nextInt(SCHEDULERS.size())),
                        r.nextInt(4) == 0 ? 10800 : 0,
                        reals));
            }
        }
        return out;
    }

    /** Random connection counts on every real server: some end, some start. */
    private static void traffic(MemoryIpvs kernel, Random r) {
        for (KernelVirtualServer k : kernel.list()) {
            for (KernelRealServer rs : k.realServers()) {
                kernel.setConnections(
                        k.service(), rs.address(), rs.port(), r.nextInt(3) == 0 ? 0 : r.nextInt(4), r.nextInt(3));
            }
        }
    }

    private static KernelRealServer connections(KernelVirtualServer k, RealServer x) {
        return k.realServers().stream()
                .filter(y -> y.address().equals(x.address()) && y.port() == x.port())
                .findFirst()
                .orElseThrow();
    }

    private static Map<ServiceId, KernelVirtualServer> byId(List<KernelVirtualServer> list) {
        Map<ServiceId, KernelVirtualServer> out = new TreeMap<>();
        list.forEach(k -> out.put(k.service(), k));
        return out;
    }
}
