package io.rulesync.agent.verify;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.apply.OwnedChains;
import io.rulesync.agent.apply.RestoreFailedException;
import io.rulesync.agent.apply.RestorePlan;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Checks that the kernel still holds what the agent applied, and repairs what drifted. A check reads
 * the canary chain of each table (gone: the table was flushed, only a full apply helps), the jumps
 * from the built-in chains, and a budget of the owned chains, taking the next ones each time so that
 * every chain is read in turn without reading 100,000 chains at once.
 */
public final class DriftCheck {
    private final int budget;
    private int cursor;

    /** What a check found. */
    public record Result(boolean canaryMissing, int chainsRead, int repaired, List<String> problems) {
    }

    public DriftCheck(int chainsPerCheck) {
        if (chainsPerCheck < 1) {
            throw new IllegalArgumentException("chains per check must be at least 1");
        }
        this.budget = chainsPerCheck;
    }

    public Result check(Applier applier, Map<IpFamily, RuleSet> expected) {
        List<String> problems = new ArrayList<>();
        int repaired = 0;
        for (Map.Entry<IpFamily, RuleSet> e : expected.entrySet()) {
            Netfilter nf = applier.netfilter(e.getKey());
            for (Table t : Table.values()) {
                if (nf.chain(t, OwnedChains.CANARY).isEmpty()) {
                    problems.add(e.getKey().id() + " " + t.restoreName() + ": canary chain " + OwnedChains.CANARY + " is gone");
                    return new Result(true, 0, 0, problems);
                }
            }
        }
        int read = 0;
        List<Slot> slots = slots(expected);
        Map<IpFamily, Map<Table, List<Chain>>> broken = new EnumMap<>(IpFamily.class);
        for (int i = 0; i < Math.min(budget, slots.size()); i++) {
            Slot s = slots.get((cursor + i) % slots.size());
            Netfilter nf = applier.netfilter(s.family);
            String diff = Applier.compare(nf, s.table, s.chain);
            read++;
            if (diff != null) {
                problems.add(s.family.id() + " " + diff);
                broken.computeIfAbsent(s.family, k -> new EnumMap<>(Table.class))
                        .computeIfAbsent(s.table, k -> new ArrayList<>()).add(s.chain);
            }
        }
        cursor = slots.isEmpty() ? 0 : (cursor + read) % slots.size();
        for (Map.Entry<IpFamily, RuleSet> e : expected.entrySet()) {
            Netfilter nf = applier.netfilter(e.getKey());
            try {
                if (Applier.ensureJumps(nf)) {
                    problems.add(e.getKey().id() + ": jumps from the built-in chains were missing or doubled");
                    repaired++;
                }
                Map<Table, List<Chain>> bad = broken.get(e.getKey());
                if (bad != null) {
                    RuleSet only = new RuleSet(e.getKey(), bad.getOrDefault(Table.FILTER, List.of()), bad.getOrDefault(Table.NAT, List.of()));
                    nf.restore(RestorePlan.full(only, List.of(), List.of()).script());
                    repaired += bad.values().stream().mapToInt(List::size).sum();
                }
            } catch (RestoreFailedException ex) {
                problems.add(e.getKey().id() + ": repair failed: " + ex.getMessage());
            }
        }
        return new Result(false, read, repaired, problems);
    }

    private record Slot(IpFamily family, Table table, Chain chain) {
    }

    private static List<Slot> slots(Map<IpFamily, RuleSet> expected) {
        List<Slot> out = new ArrayList<>();
        expected.forEach((f, rs) -> {
            for (Table t : Table.values()) {
                for (Chain c : rs.chains(t)) {
                    out.add(new Slot(f, t, c));
                }
            }
        });
        return out;
    }
}
