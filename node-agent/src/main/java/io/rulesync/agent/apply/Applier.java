package io.rulesync.agent.apply;

import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a node's kernel from one rule set to the next, per family, with one atomic restore each;
 * verifies what it wrote; and keeps the node on its last good rules when anything fails: a family
 * already changed is changed back, so the node never runs half a version.
 */
public final class Applier {
    private final Map<IpFamily, Netfilter> families;
    private static final Logger log = LoggerFactory.getLogger(Applier.class);

    private final String note;
    private final Clock clock;

    /** Without a note; restores timed by the system clock. */
    public Applier(List<Netfilter> netfilters) {
        this(netfilters, null, Clock.systemUTC());
    }

    /**
     * @param note  said after the mode in acks, e.g. why this is not the mode that was asked for; may be null
     * @param clock times the restores
     */
    public Applier(List<Netfilter> netfilters, String note, Clock clock) {
        Map<IpFamily, Netfilter> m = new EnumMap<>(IpFamily.class);
        for (Netfilter n : netfilters) {
            m.put(n.family(), n);
        }
        this.families = m;
        this.note = note;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** What the agent programs, as its acks report it: "iptables", "dry-run", with the note if any. */
    public String mode() {
        String base = families.values().iterator().next().mode();
        return note == null ? base : base + " (" + note + ")";
    }

    public List<IpFamily> families() {
        return List.copyOf(families.keySet());
    }

    public Netfilter netfilter(IpFamily family) {
        return families.get(family);
    }

    /** What an apply did. {@code error} is null when it succeeded. */
    public record Outcome(String error, int restoreLines, long restoreMillis) {
        public boolean ok() {
            return error == null;
        }
    }

    /**
     * Applies {@code after}. {@code before} is what the kernel holds of rulesync's chains, or null
     * when that is unknown (start-up, a flushed table): then every chain is rewritten and owned
     * chains the kernel holds beyond {@code after} are removed.
     */
    public Outcome apply(Map<IpFamily, RuleSet> before, Map<IpFamily, RuleSet> after) {
        long restoreMillis = 0;
        int lines = 0;
        List<IpFamily> done = new ArrayList<>();
        for (Map.Entry<IpFamily, Netfilter> e : families.entrySet()) {
            IpFamily f = e.getKey();
            Netfilter nf = e.getValue();
            RuleSet target = after.get(f);
            if (target == null) {
                continue;
            }
            RuleSet from = before == null ? null : before.get(f);
            try {
                RestorePlan plan;
                long t0 = clock.millis();
                if (from == null) {
                    List<RestorePlan.TableChain> stale = stale(nf);
                    for (String script : FullLoad.scripts(nf, target, stale, FULL_LOAD_LINES)) {
                        restoreNaming(nf, script);
                        lines += (int) script.lines().count() - 2;
                    }
                    plan = RestorePlan.full(target, List.of(), stale); // what to read back
                    // Incremental applies leave the jumps to the drift check: reading five built-in
                    // chains costs ~15 ms, and nothing but a foreign hand removes a jump.
                    ensureJumps(nf);
                    int left = Leftovers.leaveIpvsMode(nf);
                    if (left > 0) {
                        log.info("{}: removed {} chains and jumps IPVS mode had left", f.id(), left);
                    }
                } else {
                    plan = RestorePlan.between(from, target);
                    if (!plan.isEmpty()) {
                        restoreNaming(nf, plan.script());
                    }
                    lines += plan.lines();
                }
                restoreMillis += clock.millis() - t0;
                done.add(f);
                List<String> problems = verify(nf, target, plan);
                if (!problems.isEmpty()) {
                    throw new RestoreFailedException(
                            "the kernel does not hold what was applied: " + String.join("; ", problems));
                }
            } catch (RestoreFailedException ex) {
                String error = f.id() + ": " + ex.getMessage();
                rollBack(before, after, done, error);
                return new Outcome(error, lines, restoreMillis);
            }
        }
        return new Outcome(null, lines, restoreMillis);
    }

    private static final java.util.regex.Pattern FAILED_LINE = java.util.regex.Pattern.compile("line:? (\\d+)");

    /** Restores; a refusal names the line of the script it refers to, since the tools only give its number. */
    private static void restoreNaming(Netfilter nf, String script) throws RestoreFailedException {
        try {
            nf.restore(script);
        } catch (RestoreFailedException e) {
            java.util.regex.Matcher m = FAILED_LINE.matcher(e.getMessage());
            String[] lines = script.split("\n");
            if (m.find()) {
                int n = Integer.parseInt(m.group(1));
                if (n >= 1 && n <= lines.length) {
                    String l = lines[n - 1];
                    throw new RestoreFailedException(e.getMessage() + " [line " + n + ": "
                            + (l.length() > 300 ? l.substring(0, 300) + "..." : l) + "]");
                }
            }
            throw e;
        }
    }

    private void rollBack(
            Map<IpFamily, RuleSet> before, Map<IpFamily, RuleSet> after, List<IpFamily> done, String error) {
        if (before == null) {
            log.warn("apply failed on a full sync, nothing to roll back to: {}", error);
            return;
        }
        for (IpFamily f : done) {
            RuleSet back = before.get(f);
            if (back == null) {
                continue;
            }
            try {
                families.get(f).restore(RestorePlan.between(after.get(f), back).script());
            } catch (RestoreFailedException ex) {
                log.warn("could not restore the previous {} rules after a failed apply: {}", f.id(), ex.getMessage());
            }
        }
    }

    /** Lines per restore of a full load: about 500 Services, ~1.5 s each on this kernel. */
    static final int FULL_LOAD_LINES = 20_000;

    /** The owned chains the kernel holds (the full load removes those the target lacks). */
    private static List<RestorePlan.TableChain> stale(Netfilter nf) {
        List<RestorePlan.TableChain> stale = new ArrayList<>();
        for (Table t : Table.values()) {
            for (String c : nf.chainNames(t)) {
                if (OwnedChains.owns(t, c) && !c.equals(OwnedChains.CANARY)) {
                    stale.add(new RestorePlan.TableChain(t, c));
                }
            }
        }
        return stale;
    }

    /** Puts kube-proxy's jumps from the built-in chains in place, each exactly once. */
    public static boolean ensureJumps(Netfilter nf) throws RestoreFailedException {
        return ensureJumps(nf, KubeJumps.of(nf.family()));
    }

    /** The same for any list of jumps (IPVS mode's, say). */
    public static boolean ensureJumps(Netfilter nf, List<KubeJumps.Jump> jumps) throws RestoreFailedException {
        StringBuilder sb = new StringBuilder();
        for (Table t : Table.values()) {
            Map<String, List<String>> lines = new LinkedHashMap<>();
            for (KubeJumps.Jump j : KubeJumps.builtins(jumps)) {
                if (j.table() == t) {
                    lines.put(j.builtin(), nf.chain(t, j.builtin()).orElse(List.of()));
                }
            }
            List<String> edits = KubeJumps.edits(jumps, t, lines);
            if (!edits.isEmpty()) {
                sb.append('*').append(t.restoreName()).append('\n');
                edits.forEach(e -> sb.append(e).append('\n'));
                sb.append("COMMIT\n");
            }
        }
        if (sb.isEmpty()) {
            return false;
        }
        nf.restore(sb.toString());
        return true;
    }

    /**
     * Chains read back after an apply. Reading one costs an iptables process (~4 ms): a big apply
     * (a start-up, thousands of chains) checks this many of the chains it wrote, and the periodic
     * drift check reads the rest, and the dispatch chains, in turn.
     */
    static final int READ_BACK = 24;

    /** Reads back chains the plan wrote (up to {@link #READ_BACK}) and compares them with the target. */
    static List<String> verify(Netfilter nf, RuleSet target, RestorePlan plan) {
        List<String> problems = new ArrayList<>();
        int budget = READ_BACK;
        for (Table t : Table.values()) {
            Map<String, Chain> byName = new LinkedHashMap<>();
            target.chains(t).forEach(c -> byName.put(c.name(), c));
            for (String c : plan.removed().getOrDefault(t, List.of())) {
                if (budget-- <= 0) {
                    return problems;
                }
                if (!byName.containsKey(c) && nf.chain(t, c).isPresent()) {
                    problems.add(t.restoreName() + " chain " + c + " should be gone");
                }
            }
            for (String c : plan.rewritten().getOrDefault(t, List.of())) {
                if (budget-- <= 0) {
                    return problems;
                }
                String p = compare(nf, t, byName.get(c));
                if (p != null) {
                    problems.add(p);
                }
            }
        }
        return problems;
    }

    /** Null when the kernel's chain equals {@code expected}, else what differs. */
    public static String compare(Netfilter nf, Table t, Chain expected) {
        Optional<List<String>> actual = nf.chain(t, expected.name());
        if (actual.isEmpty()) {
            return t.restoreName() + " chain " + expected.name() + " is missing";
        }
        List<String> want = expectedLines(nf, t, expected);
        List<String> got = actual.get();
        if (want.equals(got)) {
            return null;
        }
        for (int i = 0; i < Math.max(want.size(), got.size()); i++) {
            String w = i < want.size() ? want.get(i) : "(nothing)";
            String g = i < got.size() ? got.get(i) : "(nothing)";
            if (!w.equals(g)) {
                return t.restoreName() + " chain " + expected.name() + " line " + (i + 1) + ": expected '" + w
                        + "', kernel has '" + g + "'";
            }
        }
        return t.restoreName() + " chain " + expected.name() + " differs";
    }

    /** The lines {@code iptables -S CHAIN} prints for a chain holding exactly {@code expected}. */
    public static List<String> expectedLines(Netfilter nf, Table t, Chain expected) {
        List<String> want = new ArrayList<>(expected.rules().size() + 1);
        want.add("-N " + expected.name());
        for (String r : expected.rules()) {
            want.add(nf.printed(t, expected.name(), r));
        }
        return want;
    }
}
