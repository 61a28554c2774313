package io.rulesync.compiler.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.ipvs.IpvsCompiler;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.testsupport.cluster.ClusterGenerator;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The cluster-wide compile (one fragment per node class) against the per-node compile,
 * over random clusters: every node's resolved rules must be byte-identical (iptables and IPVS mode), and incremental updates
 * must equal full compiles, with diffs that take one version to the next.
 */
class ClusterCompilerPropertiesTest {

    static long[] seeds() {
        return new Random(4711).longs(120).toArray();
    }

    static ClusterSettings settings(Random r) {
        List<IpFamily> families = switch (r.nextInt(3)) {
            case 0 -> List.of(IpFamily.IPV4);
            case 1 -> List.of(IpFamily.IPV6);
            default -> List.of(IpFamily.IPV4, IpFamily.IPV6);
        };
        List<Cidr> cidrs =
                r.nextInt(4) == 0 ? List.of() : List.of(Cidr.parse("10.180.0.0/16"), Cidr.parse("fd00:180::/64"));
        List<Cidr> nodePorts = switch (r.nextInt(6)) {
            case 0 -> List.of(Cidr.parse("192.168.0.0/24"), Cidr.parse("fd00:192::/64"));
            case 1 -> List.of(Cidr.parse("0.0.0.0/0"), Cidr.parse("::/0"));
            default -> List.of();
        };
        String scheduler = List.of("rr", "lc", "mh").get(r.nextInt(3));
        return new ClusterSettings(families, cidrs, r.nextInt(5) == 0, 14, nodePorts, scheduler);
    }

    private static void assertEveryNodeMatches(
            ClusterRules rules, ClusterState state, ClusterSettings settings, long seed) throws Exception {
        for (Node node : state.nodes()) {
            for (IpFamily f : settings.families()) {
                String expected = IptablesCompiler.compile(
                                state, node.name(), ClusterCompiler.proxySettings(settings, f))
                        .render();
                assertThat(rules.ruleSet(node.name(), f).orElseThrow().render())
                        .as("seed %d node %s family %s", seed, node.name(), f)
                        .isEqualTo(expected);
                // IPVS mode from the same fragments: the parts of the node's classes, completed for the node.
                IpvsRules ipvs = IpvsCompiler.compile(
                        state, node.name(), ClusterCompiler.proxySettings(settings, f), settings.ipvsScheduler());
                IpvsRules assembled = rules.ipvs(node.name(), f).orElseThrow();
                String as = "IPVS, seed " + seed + " node " + node.name() + " family " + f;
                assertThat(assembled.ipvsadmRestore()).as(as).isEqualTo(ipvs.ipvsadmRestore());
                assertThat(assembled.ipsetRestore()).as(as).isEqualTo(ipvs.ipsetRestore());
                assertThat(assembled.iptablesRestore()).as(as).isEqualTo(ipvs.iptablesRestore());
                assertThat(assembled).as(as).isEqualTo(ipvs);
                // nftables mode too: the node's table from its classes' parts is the one compiled for it alone.
                assertThat(rules.nftables(node.name(), f).orElseThrow().render())
                        .as("nftables, seed %d node %s family %s", seed, node.name(), f)
                        .isEqualTo(
                                NftablesCompiler.compile(state, node.name(), ClusterCompiler.proxySettings(settings, f))
                                        .render());
            }
        }
        // Every fragment reads back from its text: what the api sends is what the compiler made.
        rules.fragments().forEach((k, fragment) -> {
            RuleFragment back = RuleFragment.parse(fragment.text());
            assertThat(back.nftables()).as("%s, seed %d", k, seed).isEqualTo(fragment.nftables());
            assertThat(back.ipvs()).as("%s, seed %d", k, seed).isEqualTo(fragment.ipvs());
            assertThat(back).as("%s, seed %d", k, seed).isEqualTo(fragment);
        });
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void everyNodeGetsExactlyItsOwnRules(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator.Cluster c = new ClusterGenerator(r).cluster(12);
        ClusterSettings settings = settings(r);
        assertEveryNodeMatches(ClusterCompiler.compile(c.state(), settings).rules(), c.state(), settings, seed);
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void updatesEqualFullCompilesAndDiffsLeadFromOneToTheNext(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator gen = new ClusterGenerator(r);
        ClusterState state = gen.cluster(10).state();
        ClusterSettings settings = settings(r);
        CompiledCluster compiled = ClusterCompiler.compile(state, settings);
        for (int step = 0; step < 5; step++) {
            Set<NamespacedName> changed = new TreeSet<>();
            boolean nodes = false;
            List<Service> all = new ArrayList<>(state.services());
            switch (r.nextInt(5)) {
                case 0 -> {
                    Service victim = all.get(r.nextInt(all.size()));
                    changed.add(victim.name());
                    for (EndpointSlice old : state.slicesOf(victim.name())) {
                        state = state.withoutEndpointSlice(old.name());
                    }
                    for (EndpointSlice fresh : gen.slicesFor(victim)) {
                        state = state.withEndpointSlice(fresh);
                    }
                }
                case 1 -> {
                    Service victim = all.get(r.nextInt(all.size()));
                    changed.add(victim.name());
                    state = state.withoutService(victim.name());
                }
                case 2 -> {
                    NamespacedName n = new NamespacedName("ns9", "new" + step);
                    Service svc = gen.service(n);
                    state = state.withService(svc);
                    for (EndpointSlice fresh : gen.slicesFor(svc)) {
                        state = state.withEndpointSlice(fresh);
                    }
                    changed.add(n);
                }
                case 3 -> {
                    nodes = true;
                    state = state.withNode(new Node(
                            "node-e" + step,
                            "zone-" + r.nextInt(3),
                            List.of(new Node.NodeAddress("InternalIP", IpAddress.parse("192.168.0." + (100 + step))))));
                }
                default -> {
                    Service victim = all.get(r.nextInt(all.size()));
                    changed.add(victim.name());
                    state = state.withService(gen.service(victim.name()));
                }
            }
            CompiledCluster.Update u = compiled.update(state, settings, changed, nodes);
            CompiledCluster full = ClusterCompiler.compile(state, settings);
            assertThat(u.compiled().rules()).as("seed %d step %d", seed, step).isEqualTo(full.rules());
            RulesDiff diff = RulesDiff.between(compiled.rules(), u.compiled().rules(), u.touched());
            assertThat(diff)
                    .isEqualTo(RulesDiff.between(compiled.rules(), u.compiled().rules(), null));
            assertThat(diff.applyTo(compiled.rules())).isEqualTo(full.rules());
            compiled = u.compiled();
        }
        assertEveryNodeMatches(compiled.rules(), state, settings, seed);
    }
}
