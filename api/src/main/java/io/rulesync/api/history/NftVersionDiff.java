package io.rulesync.api.history;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftDelta;
import io.rulesync.model.nftables.NftOp;
import io.rulesync.model.nftables.NftTransaction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What changed in one node's {@code kube-proxy} table of one family between two versions: the lines of the whole table
 * (as {@code nft -f} loads it) that one version has and the other lacks, and the partial transactions an agent runs to
 * go from one to the other ({@link NftDelta}). Pure. Per node, like IPVS mode's: the table holds the node's NodePort
 * addresses.
 *
 * @param removed     lines of the old table gone from the new one, in the old table's order
 * @param added       lines of the new table not in the old one, in its order
 * @param transaction what the agent runs: the partial transaction, then the one deleting chains, if any
 */
public record NftVersionDiff(IpFamily family, List<String> removed, List<String> added, List<String> transaction) {
    public NftVersionDiff {
        Objects.requireNonNull(family, "family");
        removed = List.copyOf(removed);
        added = List.copyOf(added);
        transaction = List.copyOf(transaction);
    }

    /** @param before null: the node had no table of this family; {@code after} null: it has none now */
    public static NftVersionDiff between(IpFamily family, NftTransaction before, NftTransaction after) {
        NftTransaction a = before == null ? new NftTransaction(family, List.of()) : before;
        NftTransaction b = after == null ? new NftTransaction(family, List.of()) : after;
        List<String> transaction = new ArrayList<>();
        if (before != null && after != null) {
            NftDelta d = NftDelta.between(a, b);
            d.main().render().lines().forEach(transaction::add);
            d.cleanup().render().lines().forEach(transaction::add);
        } else if (after != null) {
            after.render().lines().forEach(transaction::add);
        } else if (before != null) {
            transaction.add("delete table " + before.familyName() + " " + NftTransaction.TABLE);
        }
        return new NftVersionDiff(family, only(a, b), only(b, a), transaction);
    }

    public boolean isEmpty() {
        return removed.isEmpty() && added.isEmpty();
    }

    /** The lines of {@code x} that {@code y} lacks (as many times as they are more often in x), flushes left out. */
    private static List<String> only(NftTransaction x, NftTransaction y) {
        String family = y.familyName();
        Map<String, Integer> counts = new HashMap<>();
        for (NftOp op : y.ops()) {
            counts.merge(op.render(family), 1, Integer::sum);
        }
        List<String> out = new ArrayList<>();
        for (NftOp op : x.ops()) {
            if (op instanceof NftOp.FlushChain || op instanceof NftOp.FlushSet) {
                continue; // a full load's way of writing a chain whole, not content
            }
            String line = op.render(family);
            Integer n = counts.get(line);
            if (n == null || n == 0) {
                out.add(line);
            } else {
                counts.put(line, n - 1);
            }
        }
        return out;
    }
}
