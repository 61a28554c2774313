package io.rulesync.agent.mode;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.NarrowedChange;
import io.rulesync.agent.apply.OwnedChains;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.Unit;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-proxy's iptables mode (or a dry run's files): each version is one restore per family, and
 * checks read the rules back. A check every verify interval reads the canary, the jumps and the
 * shared chains; between checks a few per-Service chains are read each second, in turn, so that
 * all of them are read over time without stalling applies.
 */
public final class IptablesMode implements KernelMode {
    private static final Logger log = LoggerFactory.getLogger(IptablesMode.class);

    private final String node;
    private final Applier applier;
    private final Conntrack conntrack;
    private final DriftCheck drift;
    private final int chainsPerSecond;
    /** How many rules the running version has on this node, or -1 when not known. */
    private int runningRules = -1;

    private Instant sampleAt;
    private FragmentKey sampleCursor;

    public IptablesMode(String node, Applier applier, Conntrack conntrack, Duration verifyEvery, int chainsPerCheck) {
        this.node = Objects.requireNonNull(node, "node");
        this.applier = Objects.requireNonNull(applier, "applier");
        this.conntrack = Objects.requireNonNull(conntrack, "conntrack");
        this.drift = new DriftCheck(chainsPerCheck);
        this.chainsPerSecond = (int) Math.max(1, chainsPerCheck * 1000L / Math.max(1, verifyEvery.toMillis()));
    }

    @Override
    public String mode() {
        return applier.mode();
    }

    @Override
    public boolean canResume() {
        return true;
    }

    /** The canary of every table of every family the version has rules of is still there. */
    @Override
    public boolean holds(NodeView v) {
        if (!v.knowsNode()) {
            return false;
        }
        for (IpFamily f : ruleSets(v).keySet()) {
            for (Table t : Table.values()) {
                if (applier.netfilter(f).chain(t, OwnedChains.CANARY).isEmpty()) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public Applied apply(NodeView from, NodeView to, Set<Unit> touched) {
        Map<IpFamily, RuleSet> before;
        Map<IpFamily, RuleSet> after;
        int rules;
        if (from != null && touched != null && runningRules >= 0) {
            before = new EnumMap<>(IpFamily.class);
            after = new EnumMap<>(IpFamily.class);
            rules = runningRules;
            for (IpFamily f : families(to, applier.families())) {
                NarrowedChange n = NarrowedChange.of(from.rules(), to.rules(), node, f, touched);
                before.put(f, n.before());
                after.put(f, n.after());
                rules += n.after().ruleCount() - n.before().ruleCount();
            }
        } else {
            before = from == null ? null : ruleSets(from);
            after = ruleSets(to);
            rules = after.values().stream().mapToInt(RuleSet::ruleCount).sum();
        }
        Applier.Outcome o = applier.apply(before, after);
        if (!o.ok()) {
            return Applied.failed(o.error());
        }
        if (from != null && touched != null) {
            conntrack.clearStale(node, families(to, applier.families()), from, to, touched);
        }
        runningRules = rules;
        return new Applied(null, rules, from == null ? "full" : o.restoreLines() + " lines");
    }

    @Override
    public DriftCheck.Result verify(NodeView running) {
        return logged(running, drift.check(applier, ruleSets(running)));
    }

    /** The canary, the jumps, and the chains many units share (dispatch and fixed chains). */
    @Override
    public DriftCheck.Result check(NodeView running) {
        Map<IpFamily, RuleSet> shared = new EnumMap<>(IpFamily.class);
        ruleSets(running)
                .forEach((f, rs) -> shared.put(
                        f,
                        new RuleSet(
                                f,
                                rs.filter(),
                                rs.nat().stream()
                                        .filter(c -> !RuleGrammar.isPerServiceChain(c.name()))
                                        .toList())));
        return logged(running, drift.check(applier, shared));
    }

    /** Every second, the next few per-Service chains. */
    @Override
    public DriftCheck.Result between(NodeView running, Instant now) {
        if (sampleAt != null && now.isBefore(sampleAt)) {
            return NOTHING;
        }
        sampleAt = now.plusSeconds(1);
        return logged(running, DriftCheck.sample(applier, nextChains(running, chainsPerSecond)));
    }

    /** A missing canary is the agent's business (a full apply); repairs are said here, where the details are. */
    private static DriftCheck.Result logged(NodeView running, DriftCheck.Result r) {
        if (!r.canaryMissing() && (r.repaired() > 0 || !r.problems().isEmpty())) {
            log.atWarn()
                    .addKeyValue("version", running.version())
                    .log("drift repaired ({}): {}", r.repaired(), String.join("; ", r.problems()));
        }
        return r;
    }

    /** The next n per-Service chains of the running version, from where the last sample stopped. */
    private List<DriftCheck.Slot> nextChains(NodeView running, int n) {
        List<DriftCheck.Slot> out = new ArrayList<>();
        SortedMap<FragmentKey, RuleFragment> all = running.rules().fragments();
        if (all.isEmpty()) {
            return out;
        }
        FragmentKey from = sampleCursor == null || all.tailMap(sampleCursor).isEmpty() ? all.firstKey() : sampleCursor;
        FragmentKey previous = null;
        for (FragmentKey k : all.tailMap(from).keySet()) {
            if (out.size() >= n) {
                sampleCursor = k;
                return out;
            }
            if (previous != null
                    && previous.family() == k.family()
                    && previous.unit().equals(k.unit())) {
                continue; // another node class of the same unit
            }
            previous = k;
            if (applier.families().contains(k.family()) && k.unit() instanceof Unit.Port) {
                running.rules()
                        .resolve(node, k.family(), k.unit())
                        .ifPresent(f ->
                                f.natChains().forEach(c -> out.add(new DriftCheck.Slot(k.family(), Table.NAT, c))));
            }
        }
        sampleCursor = null; // the end: start over next time
        return out;
    }

    /** The rule sets of the families this node's kernel takes (those the cluster has rules of). */
    private Map<IpFamily, RuleSet> ruleSets(NodeView v) {
        Map<IpFamily, RuleSet> out = new EnumMap<>(IpFamily.class);
        for (IpFamily f : families(v, applier.families())) {
            v.ruleSet(f).ifPresent(rs -> out.put(f, rs));
        }
        return out;
    }

    /** The families of {@code v} the kernel takes. */
    static List<IpFamily> families(NodeView v, List<IpFamily> kernel) {
        return v.rules().families().stream().filter(kernel::contains).toList();
    }
}
