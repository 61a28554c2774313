package io.rulesync.agent.apply;

import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.agent.plan.SequenceEdits;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Loads a whole rule set when the agent does not know what the kernel holds (start-up without
 * state, a flushed table), as a series of restores of bounded size instead of one. On this
 * kernel's iptables-nft the cost of one restore grows much faster than its size: 10,000 Services in
 * one restore took 36 minutes, in batches of 500 Services about 1.5 s each (BENCHMARKS.md).
 *
 * <p>Every step leaves a consistent kernel, so traffic keeps flowing while it loads:
 * <ol>
 *   <li>the per-Service and fixed chains, each batch closed under jumps (a chain comes with the
 *       chains it jumps to), declared and filled; the canary and missing dispatch chains first;</li>
 *   <li>the dispatch chains brought to their target by rule edits against what the kernel lists
 *       (never flushed, so Services already programmed stay reachable);</li>
 *   <li>stale owned chains flushed, then deleted.</li>
 * </ol>
 * The load as a whole is not atomic; a failure leaves the node in an unknown state, which the agent
 * treats as such (the next attempt is again a full load).
 */
final class FullLoad {
    private FullLoad() {}

    static List<String> scripts(Netfilter nf, RuleSet target, Collection<RestorePlan.TableChain> stale, int maxLines) {
        List<String> out = new ArrayList<>();
        for (Table t : Table.values()) {
            Batches b = new Batches(t, maxLines);
            Map<String, Chain> own = new LinkedHashMap<>();
            List<Chain> dispatch = new ArrayList<>();
            for (Chain c : target.chains(t)) {
                if (DispatchChain.of(t, c.name()) != null) {
                    dispatch.add(c);
                } else {
                    own.put(c.name(), c);
                }
            }
            Map<String, List<String>> kernelDispatch = new LinkedHashMap<>();
            b.line(":" + OwnedChains.CANARY + " - [0:0]");
            for (Chain d : dispatch) {
                nf.chain(t, d.name())
                        .ifPresentOrElse(
                                lines -> kernelDispatch.put(d.name(), lines.subList(1, lines.size())),
                                () -> b.line(":" + d.name() + " - [0:0]"));
            }
            Set<String> done = new HashSet<>();
            for (Chain c : own.values()) {
                List<Chain> closure = new ArrayList<>();
                close(c, own, done, closure);
                b.unit(closure);
            }
            b.cut();
            for (Chain d : dispatch) {
                List<String> have = kernelDispatch.getOrDefault(d.name(), List.of());
                List<String> want = new ArrayList<>(d.rules().size());
                for (String r : d.rules()) {
                    want.add(nf.printed(t, d.name(), r));
                }
                SequenceEdits e = SequenceEdits.between(have, want);
                // Deletes by position, from the last: the kernel's listing is exact.
                for (int k = e.deletes().size() - 1; k >= 0; k--) {
                    b.line("-D " + d.name() + " " + (e.deletes().get(k).index() + 1));
                }
                for (SequenceEdits.Insert i : e.inserts()) {
                    b.line("-I " + d.name() + " " + (i.index() + 1) + " "
                            + d.rules().get(i.index()));
                }
            }
            b.cut();
            List<String> gone = new ArrayList<>();
            for (RestorePlan.TableChain s : stale) {
                if (s.table() == t
                        && !s.chain().equals(OwnedChains.CANARY)
                        && !own.containsKey(s.chain())
                        && dispatch.stream().noneMatch(d -> d.name().equals(s.chain()))) {
                    gone.add(s.chain());
                }
            }
            gone.forEach(g -> b.line(":" + g + " - [0:0]"));
            b.cut();
            gone.forEach(g -> b.line("-X " + g));
            b.cut();
            out.addAll(b.scripts);
        }
        return out;
    }

    /** Adds c after the owned chains it jumps to (depth first), each once. */
    private static void close(Chain c, Map<String, Chain> own, Set<String> done, List<Chain> out) {
        if (!done.add(c.name())) {
            return;
        }
        for (String r : c.rules()) {
            int j = r.lastIndexOf("-j ");
            if (j >= 0) {
                String target = r.substring(j + 3).split(" ", 2)[0];
                Chain next = own.get(target);
                if (next != null) {
                    close(next, own, done, out);
                }
            }
        }
        out.add(c);
    }

    /** Restore scripts of one table, each at most about maxLines lines. */
    private static final class Batches {
        private final Table table;
        private final int maxLines;
        private final List<String> scripts = new ArrayList<>();
        private final List<String> lines = new ArrayList<>();

        Batches(Table table, int maxLines) {
            this.table = table;
            this.maxLines = maxLines;
        }

        void line(String l) {
            if (lines.size() >= maxLines) {
                cut();
            }
            lines.add(l);
        }

        /** Chains that must land in the same restore: declarations first, then their rules. */
        void unit(List<Chain> chains) {
            int size = chains.stream().mapToInt(c -> 1 + c.rules().size()).sum();
            if (!lines.isEmpty() && lines.size() + size > maxLines) {
                cut();
            }
            chains.forEach(c -> lines.add(":" + c.name() + " - [0:0]"));
            chains.forEach(c -> c.rules().forEach(r -> lines.add("-A " + c.name() + " " + r)));
        }

        void cut() {
            if (lines.isEmpty()) {
                return;
            }
            StringBuilder sb =
                    new StringBuilder("*").append(table.restoreName()).append('\n');
            lines.forEach(l -> sb.append(l).append('\n'));
            sb.append("COMMIT\n");
            scripts.add(sb.toString());
            lines.clear();
        }
    }
}
