package io.rulesync.agent.mode;

import io.rulesync.agent.apply.Leftovers;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.apply.RestoreFailedException;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.nftables.NftKernel;
import io.rulesync.agent.nftables.NftKernel.NftReadException;
import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.plan.nftables.KernelTable;
import io.rulesync.agent.plan.nftables.NftCheck;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftContent;
import io.rulesync.model.nftables.NftDelta;
import io.rulesync.model.nftables.NftOp;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.model.rules.Unit;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-proxy's nftables mode: the node's {@code kube-proxy} table of each family. The first apply (and any after a
 * failure or drift) replaces the table whole in one atomic transaction; every later version is a partial transaction
 * ({@link NftDelta}) that touches only what changed, then a second one that deletes the chains gone, as kube-proxy's
 * partial syncs do. After a full load the table is read back and compared with the version ({@link NftCheck}); after
 * a delta, a few of the chains it wrote, while the table is small enough that a read is cheap. The readings are kept,
 * and the check (every verify interval, less often when the table takes long to read) compares the whole table with
 * the version and with them. Drift (a chain, rule, element or set added, changed or removed by hand) is repaired by
 * replacing the table. No other table is ever touched.
 */
public final class NftablesMode implements KernelMode {
    private static final Logger log = LoggerFactory.getLogger(NftablesMode.class);
    /** How many of the chains a delta wrote are read back, the Services' own chains first; the check reads the rest. */
    static final int READ_BACK_CHAINS = 4;
    /**
     * Reading one chain back costs what reading the table does (nft 1.0.6 fetches every rule of the table first: about
     * 30 s at 10,000 Services). A delta is read back only while the table reads in less than this; beyond it, the
     * kernel's atomic commit is what says the delta holds, and the check reads the table.
     */
    static final Duration READ_BACK_LIMIT = Duration.ofSeconds(1);
    /** The periodic check reads the whole table at most this share of the time (its cost grows with the table). */
    static final int CHECK_SHARE = 10;

    private final String node;
    private final NftKernel kernel;
    private final List<IpFamily> families;
    private final Conntrack conntrack;
    private final Clock clock;
    /** When the periodic check may read the table again; null: at once. */
    private Instant checkAt;
    /** How long the last read of a whole table took. */
    private Duration tableRead = Duration.ZERO;
    /** iptables mode's packet filters, cleaned of its chains before the first full load; none in a dry run. */
    private final List<Netfilter> iptables;

    private boolean leftoversRemoved;
    /** What each family's table holds, as written; absent: not known (start, failure, drift): the next apply is full. */
    private final Map<IpFamily, Written> applied = new EnumMap<>(IpFamily.class);
    /** The kernel's own listing of each chain, read back after it was written and found right. */
    private final Map<IpFamily, Map<String, List<String>>> readings = new EnumMap<>(IpFamily.class);

    /** @param iptables the packet filters iptables and IPVS mode wrote to, cleaned of their chains once, at the first apply */
    public NftablesMode(
            String node,
            NftKernel kernel,
            List<IpFamily> families,
            Conntrack conntrack,
            List<Netfilter> iptables,
            Clock clock) {
        this.node = Objects.requireNonNull(node, "node");
        this.kernel = Objects.requireNonNull(kernel, "kernel");
        this.families = List.copyOf(families);
        this.conntrack = Objects.requireNonNull(conntrack, "conntrack");
        this.iptables = List.copyOf(iptables);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public String mode() {
        return kernel.readable() ? "nftables" : "nftables (dry run)";
    }

    /** A start replaces the table whole, as kube-proxy's first sync rewrites it: nothing to resume. */
    @Override
    public boolean canResume() {
        return false;
    }

    @Override
    public boolean holds(NodeView v) {
        return false;
    }

    @Override
    public Applied apply(NodeView from, NodeView to, Set<Unit> touched) {
        String left = removeLeftovers();
        if (left != null) {
            return Applied.failed(left);
        }
        int rules = 0;
        int operations = 0;
        int netlinkBefore = kernel.sentByNetlink();
        boolean full = false;
        for (IpFamily f : IptablesMode.families(to, families)) {
            Optional<NftTransaction> t;
            try {
                t = to.rules().nftables(node, f);
            } catch (IllegalStateException e) {
                return Applied.failed("version " + to.version() + ": " + e.getMessage()
                        + "; the next version the compiler writes has them");
            }
            if (t.isEmpty()) {
                continue; // not a node of this version
            }
            NftTransaction table = t.get();
            Written target = Written.of(table);
            Written before = from == null ? null : applied.get(f);
            List<NftKernel.Step> steps = new ArrayList<>();
            Set<String> written = new LinkedHashSet<>();
            if (before == null) {
                steps.add(NftKernel.Step.text(replacement(table)));
                full = true;
            } else {
                NftDelta d = NftDelta.between(before.content(), target.content());
                if (d.isEmpty()) {
                    rules += target.rules();
                    continue;
                }
                steps.add(NftKernel.Step.of(d.main()));
                if (!d.cleanup().ops().isEmpty()) {
                    steps.add(NftKernel.Step.of(d.cleanup()));
                }
                operations += d.main().ops().size() + d.cleanup().ops().size();
                // The Services' own chains first: they say which endpoints are chosen.
                d.main().ops().stream()
                        .filter(op ->
                                op instanceof NftOp.AddChain c && !c.name().startsWith("endpoint-"))
                        .forEach(op -> written.add(((NftOp.AddChain) op).name()));
                d.main().ops().stream()
                        .filter(op -> op instanceof NftOp.AddChain c && c.name().startsWith("endpoint-"))
                        .forEach(op -> written.add(((NftOp.AddChain) op).name()));
            }
            applied.remove(f); // until it is known to hold
            String error = kernel.run(f, steps, table);
            if (error != null) {
                readings.remove(f);
                return Applied.failed(error);
            }
            List<String> problems = readBack(f, target.expected(), before == null ? null : written);
            if (!problems.isEmpty()) {
                readings.remove(f);
                return Applied.failed("nft: the kernel does not hold what was written: " + String.join("; ", problems));
            }
            applied.put(f, target);
            rules += target.rules();
        }
        if (from != null && touched != null) {
            conntrack.clearStale(node, IptablesMode.families(to, families), from, to, touched);
        }
        int byNetlink = kernel.sentByNetlink() - netlinkBefore;
        return new Applied(
                null,
                rules,
                full
                        ? "full"
                        : operations + " operations"
                                + (byNetlink > 0 ? ", " + byNetlink + " transactions by netlink" : ""));
    }

    /**
     * Once per process, before the first table is written: what iptables or IPVS mode left in the packet filter (a node
     * that changes mode), as kube-proxy's cleanup at start removes it. Null when done, else why it could not be.
     */
    private String removeLeftovers() {
        if (leftoversRemoved) {
            return null;
        }
        for (Netfilter nf : iptables) {
            try {
                int n = Leftovers.leaveForNftables(nf);
                if (n > 0) {
                    log.info(
                            "{}: removed {} chains and jumps iptables or IPVS mode had left",
                            nf.family().id(),
                            n);
                }
            } catch (RestoreFailedException e) {
                return "cannot remove what iptables mode left (" + e.getMessage()
                        + "); its rules would answer before nftables mode's";
            }
        }
        leftoversRemoved = true;
        return null;
    }

    /** What a family's table holds as written: its content (what the next delta starts from), and what a check expects of it. */
    private record Written(NftContent content, NftCheck.Expected expected) {
        static Written of(NftTransaction table) {
            NftContent content = NftContent.of(table);
            return new Written(content, NftCheck.Expected.of(content));
        }

        int rules() {
            return expected.rules().values().stream()
                    .mapToInt(Integer::intValue)
                    .sum();
        }
    }

    /** The table replaced whole, atomically: created if missing, deleted, and written again. */
    private static String replacement(NftTransaction target) {
        String family = target.familyName();
        return "add table " + family + " " + NftTransaction.TABLE + "\ndelete table " + family + " "
                + NftTransaction.TABLE + "\n" + target.render();
    }

    /**
     * Reads back what was written and compares it with what the version {@code expected}; keeps the readings.
     *
     * @param written the chains a delta wrote; null: all of the table (a full load)
     */
    private List<String> readBack(IpFamily f, NftCheck.Expected expected, Set<String> written) {
        if (!kernel.readable()) {
            return List.of();
        }
        try {
            if (written == null) {
                Instant start = clock.instant();
                Optional<KernelTable> table = kernel.table(f);
                tableRead = Duration.between(start, clock.instant());
                List<String> problems = NftCheck.problems(expected, table, Map.of());
                if (problems.isEmpty()) {
                    readings.put(f, new HashMap<>(table.orElseThrow().chains()));
                }
                return problems;
            }
            Set<String> read = new LinkedHashSet<>(written.stream()
                    .limit(tableRead.compareTo(READ_BACK_LIMIT) < 0 ? READ_BACK_CHAINS : 0)
                    .toList());
            Map<String, List<String>> now = kernel.chains(f, read);
            Map<String, List<String>> kept = readings.computeIfAbsent(f, k -> new HashMap<>());
            kept.keySet().retainAll(expected.rules().keySet());
            List<String> problems = new ArrayList<>();
            kept.keySet().removeAll(written); // rewritten: their old readings say nothing now
            for (String chain : read) {
                List<String> rules = now.get(chain);
                int want = expected.rules().getOrDefault(chain, 0);
                if (rules == null) {
                    problems.add("chain " + chain + " is missing");
                } else if (rules.size() != want) {
                    problems.add("chain " + chain + " has " + rules.size() + " rules, not " + want);
                } else {
                    kept.put(chain, rules);
                }
            }
            return problems;
        } catch (NftReadException e) {
            return List.of(e.getMessage());
        }
    }

    /** Reads each family's table whole and compares it with the running version; drift is repaired by a full apply. */
    @Override
    public DriftCheck.Result verify(NodeView running) {
        if (!kernel.readable()) {
            return NOTHING;
        }
        List<String> problems = new ArrayList<>();
        int chains = 0;
        for (IpFamily f : IptablesMode.families(running, families)) {
            Written target = applied.get(f);
            if (target == null) {
                problems.add(f.id() + ": the table's state is not known");
                continue;
            }
            try {
                Instant start = clock.instant();
                Optional<KernelTable> table = kernel.table(f);
                tableRead = Duration.between(start, clock.instant());
                chains += table.map(t -> t.chains().size()).orElse(0);
                List<String> found = NftCheck.problems(target.expected(), table, readings.getOrDefault(f, Map.of()));
                found.forEach(p -> problems.add(f.id() + ": " + p));
                if (found.isEmpty()) {
                    // Chains written but not read back since: this reading is what the next check compares them with.
                    Map<String, List<String>> kept = readings.computeIfAbsent(f, k -> new HashMap<>());
                    table.orElseThrow().chains().forEach(kept::putIfAbsent);
                }
            } catch (NftReadException e) {
                log.atWarn()
                        .addKeyValue("version", running.version())
                        .log("cannot read the nftables table to check it: {}", e.getMessage());
                return new DriftCheck.Result(false, chains, 0, List.of(e.getMessage()));
            }
        }
        if (problems.isEmpty()) {
            return new DriftCheck.Result(false, chains, 0, List.of());
        }
        // The agent applies the running version in full (the table replaced), and says so with these problems.
        applied.clear();
        readings.clear();
        return new DriftCheck.Result(true, chains, 0, problems);
    }

    /**
     * Every verify interval, unless the last read of the table took long: then the next waits ten times as long, so that
     * checks cost at most a tenth of a core however large the table.
     */
    @Override
    public DriftCheck.Result check(NodeView running) {
        Instant now = clock.instant();
        if (checkAt != null && now.isBefore(checkAt)) {
            return NOTHING;
        }
        DriftCheck.Result r = verify(running);
        Duration took = Duration.between(now, clock.instant());
        checkAt = clock.instant().plus(took.multipliedBy(CHECK_SHARE - 1));
        return r;
    }

    @Override
    public DriftCheck.Result between(NodeView running, Instant now) {
        return NOTHING;
    }
}
