package io.rulesync.model.nftables;

import io.rulesync.model.cluster.IpFamily;
import java.util.List;

/**
 * A node's whole {@code kube-proxy} table of one family as one {@code nft -f} transaction: what kube-proxy's nftables
 * mode writes on a full sync. Rendered once, one operation per line.
 */
public record NftTransaction(IpFamily family, List<NftOp> ops) {
    /** kube-proxy's table, in the {@code ip} and {@code ip6} families. */
    public static final String TABLE = "kube-proxy";

    public NftTransaction {
        ops = List.copyOf(ops);
    }

    /** {@code ip} or {@code ip6}. */
    public String familyName() {
        return familyName(family);
    }

    /** nftables' name of an IP family's tables: {@code ip} or {@code ip6}. */
    public static String familyName(IpFamily family) {
        return family == IpFamily.IPV4 ? "ip" : "ip6";
    }

    public String render() {
        StringBuilder b = new StringBuilder();
        String f = familyName();
        for (NftOp op : ops) {
            b.append(op.render(f)).append('\n');
        }
        return b.toString();
    }
}
