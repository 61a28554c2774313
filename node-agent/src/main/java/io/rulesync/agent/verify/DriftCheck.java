package io.rulesync.agent.verify;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.apply.OwnedChains;
import io.rulesync.agent.apply.RestoreFailedException;
import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Checks that the kernel still holds what the agent applied, and repairs what drifted. Reading a
 * chain costs an iptables process (~3 ms at 10k Services; 100 ms for KUBE-SERVICES), so the work
 * is split: {@link #check} reads the canary of each table (gone: the table was flushed, only a
 * full load helps), the jumps from the built-in chains and a budget of owned chains;
 * {@link #sample} reads a few given chains, so that the agent can spread the read-back of 100,000
 * chains over time without stalling its applies.
 */
public final class DriftCheck {
    private final int budget;
    private int cursor;

    /** What a check found. */
    public record Result(boolean canaryMissing, int chainsRead, int repaired, List<String> problems) {}

    /** A chain rulesync owns, in a family and table. */
    public record Slot(IpFamily family, Table table, Chain chain) {}

    public DriftCheck(int chainsPerCheck) {
        if (chainsPerCheck < 1) {
            throw new IllegalArgumentException("chains per check must be at least 1");
        }
        this.budget = chainsPerCheck;
    }

    /** Canary, jumps, and the next {@code chainsPerCheck} chains of {@code expected} in turn. */
    public Result check(Applier applier, Map<IpFamily, RuleSet> expected) {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<IpFamily, RuleSet> e : expected.entrySet()) {
            Netfilter nf = applier.netfilter(e.getKey());
            for (Table t : Table.values()) {
                if (nf.chain(t, OwnedChains.CANARY).isEmpty()) {
                    problems.add(e.getKey().id() + " " + t.restoreName() + ": canary chain " + OwnedChains.CANARY
                            + " is gone");
                    return new Result(true, 0, 0, problems);
                }
            }
        }
        int repaired = 0;
        for (IpFamily f : expected.keySet()) {
            try {
                if (Applier.ensureJumps(applier.netfilter(f))) {
                    problems.add(f.id() + ": jumps from the built-in chains were missing or doubled");
                    repaired++;
                }
            } catch (RestoreFailedException ex) {
                problems.add(f.id() + ": repairing the jumps failed: " + ex.getMessage());
            }
        }
        List<Slot> slots = new ArrayList<>();
        expected.forEach((f, rs) -> {
            for (Table t : Table.values()) {
                rs.chains(t).forEach(c -> slots.add(new Slot(f, t, c)));
            }
        });
        List<Slot> turn = new ArrayList<>();
        for (int i = 0; i < Math.min(budget, slots.size()); i++) {
            turn.add(slots.get((cursor + i) % slots.size()));
        }
        cursor = slots.isEmpty() ? 0 : (cursor + turn.size()) % slots.size();
        Result r = sample(applier, turn);
        problems.addAll(r.problems());
        return new Result(false, r.chainsRead(), repaired + r.repaired(), problems);
    }

    /** Reads the given chains and rewrites those that differ. */
    public static Result sample(Applier applier, List<Slot> chains) {
        List<String> problems = new ArrayList<>();
        Map<IpFamily, Map<Table, List<Chain>>> broken = new EnumMap<>(IpFamily.class);
        for (Slot s : chains) {
            String diff = Applier.compare(applier.netfilter(s.family()), s.table(), s.chain());
            if (diff != null) {
                problems.add(s.family().id() + " " + diff);
                broken.computeIfAbsent(s.family(), k -> new EnumMap<>(Table.class))
                        .computeIfAbsent(s.table(), k -> new ArrayList<>())
                        .add(s.chain());
            }
        }
        int repaired = 0;
        for (Map.Entry<IpFamily, Map<Table, List<Chain>>> e : broken.entrySet()) {
            Map<Table, List<Chain>> bad = e.getValue();
            RuleSet only = new RuleSet(
                    e.getKey(), bad.getOrDefault(Table.FILTER, List.of()), bad.getOrDefault(Table.NAT, List.of()));
            try {
                applier.netfilter(e.getKey())
                        .restore(RestorePlan.full(only, List.of(), List.of()).script());
                repaired += bad.values().stream().mapToInt(List::size).sum();
            } catch (RestoreFailedException ex) {
                problems.add(e.getKey().id() + ": repair failed: " + ex.getMessage());
            }
        }
        return new Result(false, chains.size(), repaired, problems);
    }
}
