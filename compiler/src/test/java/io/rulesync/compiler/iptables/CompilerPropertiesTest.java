package io.rulesync.compiler.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.ServiceChain;
import io.rulesync.model.rules.Table;
import io.rulesync.testsupport.cluster.ClusterGenerator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Properties of the compiler over random clusters. Each case is one seed: a failure names the seed,
 * and the same seed reproduces it exactly.
 */
class CompilerPropertiesTest {
    private static final Set<String> BUILTIN_TARGETS =
            Set.of("ACCEPT", "DROP", "REJECT", "RETURN", "MARK", "MASQUERADE", "DNAT");
    private static final Pattern JUMP = Pattern.compile(" -j (\\S+)");
    private static final Pattern PROBABILITY = Pattern.compile("--probability (\\S+)");

    static long[] seeds() {
        return new Random(42).longs(150).toArray();
    }

    private static ProxySettings settings(IpFamily family, Random r) {
        ProxySettings d = ProxySettings.defaults(family);
        List<Cidr> cidrs =
                r.nextInt(4) == 0 ? List.of() : List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("fd00:10::/64"));
        return new ProxySettings(
                family,
                cidrs,
                r.nextInt(5) == 0,
                d.masqueradeMark(),
                r.nextBoolean(),
                r.nextBoolean(),
                r.nextInt(5) == 0 ? List.of(Cidr.parse("192.168.0.0/24"), Cidr.parse("fd00:192::/64")) : List.of(),
                r.nextInt(5) == 0);
    }

    private static RuleSet compile(ClusterState state, String node, ProxySettings s) throws Exception {
        return IptablesCompiler.compile(state, node, s).ruleSet();
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void eachEndpointIsChosenWithProbabilityOneOverN(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator.Cluster c = new ClusterGenerator(r).cluster(8);
        for (IpFamily family : IpFamily.values()) {
            RuleSet rules = compile(c.state(), "node-a", settings(family, r));
            for (Chain chain : rules.nat()) {
                if (!chain.name().startsWith(ServiceChain.SVC.prefix())
                        && !chain.name().startsWith(ServiceChain.SVL.prefix())) {
                    continue;
                }
                List<String> jumps = chain.rules().stream()
                        .filter(rule -> rule.contains("-j KUBE-SEP-") && !rule.contains("-m recent"))
                        .toList();
                int n = jumps.size();
                assertThat(n)
                        .as("seed %d chain %s has endpoints", seed, chain.name())
                        .isPositive();
                double remaining = 1.0;
                Set<String> targets = new HashSet<>();
                for (int i = 0; i < n; i++) {
                    String rule = jumps.get(i);
                    Matcher m = PROBABILITY.matcher(rule);
                    double p;
                    if (i == n - 1) {
                        assertThat(m.find())
                                .as("seed %d: last rule of %s is unconditional", seed, chain.name())
                                .isFalse();
                        p = 1.0;
                    } else {
                        assertThat(m.find())
                                .as("seed %d: rule %d of %s is random", seed, i, chain.name())
                                .isTrue();
                        p = Double.parseDouble(m.group(1));
                    }
                    double chosen = remaining * p;
                    assertThat(chosen)
                            .as("seed %d: %s endpoint %d of %d", seed, chain.name(), i, n)
                            .isCloseTo(1.0 / n, org.assertj.core.data.Offset.offset(1e-8));
                    remaining -= chosen;
                    targets.add(jumpTarget(rule));
                }
                assertThat(targets)
                        .as("seed %d: every endpoint once in %s", seed, chain.name())
                        .hasSize(n);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void everyRuleReadsBackAsTheTypedRuleThatWroteIt(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator.Cluster c = new ClusterGenerator(r).cluster(10);
        for (IpFamily family : IpFamily.values()) {
            RuleSet rules = compile(
                    c.state(),
                    ClusterGenerator.NODES.get(r.nextInt(ClusterGenerator.NODES.size())),
                    settings(family, r));
            // The agent's grammar accepts the whole set, and each rule it reads writes the same text again.
            RuleGrammar.check(rules);
            for (Table t : Table.values()) {
                for (Chain chain : rules.chains(t)) {
                    assertThat(RuleGrammar.check(t, family, chain))
                            .extracting(Rule::restoreForm)
                            .as("seed %d: %s", seed, chain.name())
                            .isEqualTo(chain.rules());
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void everyJumpTargetExistsAndNoChainIsDeclaredTwice(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator.Cluster c = new ClusterGenerator(r).cluster(10);
        for (IpFamily family : IpFamily.values()) {
            for (String node : ClusterGenerator.NODES) {
                RuleSet rules = compile(c.state(), node, settings(family, r));
                for (Table t : Table.values()) {
                    Set<String> declared = new HashSet<>();
                    for (Chain chain : rules.chains(t)) {
                        assertThat(declared.add(chain.name()))
                                .as("seed %d: %s declared twice", seed, chain.name())
                                .isTrue();
                    }
                    for (Chain chain : rules.chains(t)) {
                        for (String rule : chain.rules()) {
                            String target = jumpTarget(rule);
                            if (target != null && !BUILTIN_TARGETS.contains(target)) {
                                assertThat(declared)
                                        .as("seed %d: %s -> %s", seed, chain.name(), target)
                                        .contains(target);
                            }
                        }
                    }
                }
                // The rendered text declares each chain on exactly one line per table.
                for (String table : rules.render().split("COMMIT\n")) {
                    assertThat(table.lines().filter(l -> l.startsWith(":")).toList())
                            .as("seed %d", seed)
                            .doesNotHaveDuplicates();
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void outputDoesNotDependOnInputOrder(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator gen = new ClusterGenerator(r);
        ClusterGenerator.Cluster c = gen.cluster(8);
        ProxySettings s = settings(IpFamily.IPV4, r);

        // Same objects in another order, and the same endpoints regrouped into other slices.
        List<Service> services = new ArrayList<>(c.services());
        Collections.shuffle(services, r);
        Map<NamespacedName, List<EndpointSlice>> byService = new HashMap<>();
        for (EndpointSlice slice : c.slices()) {
            byService.computeIfAbsent(slice.service(), k -> new ArrayList<>()).add(slice);
        }
        List<EndpointSlice> regrouped = new ArrayList<>();
        for (Service svc : c.services()) {
            for (IpFamily f : IpFamily.values()) {
                List<EndpointSlice> mine = byService.getOrDefault(svc.name(), List.of()).stream()
                        .filter(sl -> sl.addressType().name().equals(f.name()))
                        .toList();
                if (mine.isEmpty()) {
                    continue;
                }
                List<io.rulesync.model.cluster.Endpoint> eps = new ArrayList<>();
                mine.forEach(sl -> eps.addAll(sl.endpoints()));
                regrouped.addAll(gen.split(svc, f, mine.get(0).ports(), eps));
            }
        }
        Collections.shuffle(regrouped, r);
        List<io.rulesync.model.cluster.Node> nodes = new ArrayList<>(c.nodes());
        Collections.reverse(nodes);

        for (String node : ClusterGenerator.NODES) {
            String a = compile(c.state(), node, s).render();
            String b = compile(ClusterState.of(services, regrouped, nodes), node, s)
                    .render();
            assertThat(b).as("seed %d node %s", seed, node).isEqualTo(a);
        }
    }

    /** Recompiling only what changed gives exactly the rules of a full compile of the new state. */
    @ParameterizedTest
    @MethodSource("seeds")
    void incrementalUpdateEqualsFullCompile(long seed) throws Exception {
        Random r = new Random(seed);
        ClusterGenerator gen = new ClusterGenerator(r);
        ClusterGenerator.Cluster c = gen.cluster(12);
        ProxySettings s = settings(r.nextBoolean() ? IpFamily.IPV4 : IpFamily.IPV6, r);
        ClusterState state = c.state();
        NodeRules rules = IptablesCompiler.compile(state, "node-b", s);
        for (int step = 0; step < 6; step++) {
            List<Service> all = new ArrayList<>(state.services());
            Set<NamespacedName> changed = new TreeSet<>();
            for (int k = 0; k < 1 + r.nextInt(3); k++) {
                Service victim = all.get(r.nextInt(all.size()));
                changed.add(victim.name());
                switch (r.nextInt(4)) {
                    case 0 -> state = state.withoutService(victim.name());
                    case 1 -> {
                        for (EndpointSlice old : state.slicesOf(victim.name())) {
                            state = state.withoutEndpointSlice(old.name());
                        }
                        for (EndpointSlice fresh : gen.slicesFor(victim)) {
                            state = state.withEndpointSlice(fresh);
                        }
                    }
                    case 2 -> state = state.withService(gen.service(victim.name()));
                    default -> {
                        NamespacedName added = new NamespacedName("ns9", "added" + step + k);
                        Service svc = gen.service(added);
                        state = state.withService(svc);
                        for (EndpointSlice fresh : gen.slicesFor(svc)) {
                            state = state.withEndpointSlice(fresh);
                        }
                        changed.add(added);
                    }
                }
            }
            rules = rules.update(state, changed);
            assertThat(rules.render())
                    .as("seed %d step %d", seed, step)
                    .isEqualTo(IptablesCompiler.compile(state, "node-b", s).render());
        }
    }

    private static String jumpTarget(String rule) {
        Matcher m = JUMP.matcher(" " + rule);
        return m.find() ? m.group(1) : null;
    }
}
