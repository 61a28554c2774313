package io.rulesync.agent.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The edits that turn one list of rules into another, for the shared dispatch chains: adding a
 * Service must insert its few rules into a 10,000-rule KUBE-SERVICES, not restate the chain (which
 * costs seconds on iptables-nft and is what kube-proxy's partial sync does).
 *
 * <p>Myers' O((N+M)·D) shortest edit script after trimming the common prefix and suffix. When the
 * lists differ by more than {@link #MAX_EDITS}, the differing middle is replaced wholesale: that
 * many edits cost as much as a rewrite, and the quadratic bookkeeping would cost more.
 */
public final class SequenceEdits {
    static final int MAX_EDITS = 2_000;

    /** Remove the rule at {@code index} of the old list. */
    public record Delete(int index, String rule) {}

    /** Insert {@code rule} so that it ends up at {@code index} of the new list. */
    public record Insert(int index, String rule) {}

    private final List<Delete> deletes;
    private final List<Insert> inserts;

    private SequenceEdits(List<Delete> deletes, List<Insert> inserts) {
        this.deletes = List.copyOf(deletes);
        this.inserts = List.copyOf(inserts);
    }

    /** Deletes in ascending old index. */
    public List<Delete> deletes() {
        return deletes;
    }

    /**
     * Inserts in ascending new index. Applied in this order after all deletes, each lands at its
     * final position: every rule before it is by then in place.
     */
    public List<Insert> inserts() {
        return inserts;
    }

    public boolean isEmpty() {
        return deletes.isEmpty() && inserts.isEmpty();
    }

    public static SequenceEdits between(List<String> before, List<String> after) {
        Objects.requireNonNull(before, "before");
        Objects.requireNonNull(after, "after");
        int prefix = 0;
        int max = Math.min(before.size(), after.size());
        while (prefix < max && before.get(prefix).equals(after.get(prefix))) {
            prefix++;
        }
        int suffix = 0;
        while (suffix < max - prefix
                && before.get(before.size() - 1 - suffix).equals(after.get(after.size() - 1 - suffix))) {
            suffix++;
        }
        List<String> a = before.subList(prefix, before.size() - suffix);
        List<String> b = after.subList(prefix, after.size() - suffix);
        List<Delete> deletes = new ArrayList<>();
        List<Insert> inserts = new ArrayList<>();
        if (!myers(a, b, prefix, deletes, inserts)) {
            for (int i = 0; i < a.size(); i++) {
                deletes.add(new Delete(prefix + i, a.get(i)));
            }
            for (int j = 0; j < b.size(); j++) {
                inserts.add(new Insert(prefix + j, b.get(j)));
            }
        }
        return new SequenceEdits(deletes, inserts);
    }

    /** Fills the edits and returns true, or returns false when more than MAX_EDITS are needed. */
    private static boolean myers(
            List<String> a, List<String> b, int offset, List<Delete> deletes, List<Insert> inserts) {
        int n = a.size();
        int m = b.size();
        if (n == 0 && m == 0) {
            return true;
        }
        int limit = Math.min(n + m, MAX_EDITS);
        // v[k + limit]: furthest x on diagonal k; one snapshot per d for the backtrack.
        int[] v = new int[2 * limit + 2];
        List<int[]> trace = new ArrayList<>();
        for (int d = 0; d <= limit; d++) {
            trace.add(v.clone());
            for (int k = -d; k <= d; k += 2) {
                int x;
                if (k == -d || (k != d && v[k - 1 + limit] < v[k + 1 + limit])) {
                    x = v[k + 1 + limit];
                } else {
                    x = v[k - 1 + limit] + 1;
                }
                int y = x - k;
                while (x < n && y < m && a.get(x).equals(b.get(y))) {
                    x++;
                    y++;
                }
                v[k + limit] = x;
                if (x >= n && y >= m) {
                    backtrack(trace, limit, d, n, m, a, b, offset, deletes, inserts);
                    return true;
                }
            }
        }
        return false;
    }

    private static void backtrack(
            List<int[]> trace,
            int limit,
            int dEnd,
            int n,
            int m,
            List<String> a,
            List<String> b,
            int offset,
            List<Delete> deletes,
            List<Insert> inserts) {
        int x = n;
        int y = m;
        List<Delete> ds = new ArrayList<>();
        List<Insert> is = new ArrayList<>();
        for (int d = dEnd; d > 0; d--) {
            int[] v = trace.get(d);
            int k = x - y;
            int prevK = (k == -d || (k != d && v[k - 1 + limit] < v[k + 1 + limit])) ? k + 1 : k - 1;
            int prevX = v[prevK + limit];
            int prevY = prevX - prevK;
            while (x > prevX && y > prevY) {
                x--;
                y--;
            }
            if (x == prevX) {
                is.add(new Insert(offset + prevY, b.get(prevY)));
            } else {
                ds.add(new Delete(offset + prevX, a.get(prevX)));
            }
            x = prevX;
            y = prevY;
        }
        for (int i = ds.size() - 1; i >= 0; i--) {
            deletes.add(ds.get(i));
        }
        for (int i = is.size() - 1; i >= 0; i--) {
            inserts.add(is.get(i));
        }
    }
}
