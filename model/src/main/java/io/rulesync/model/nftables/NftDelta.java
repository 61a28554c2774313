package io.rulesync.model.nftables;

import io.rulesync.model.nftables.NftOp.AddElement;
import io.rulesync.model.nftables.NftOp.AddRule;
import io.rulesync.model.nftables.NftOp.DeleteChain;
import io.rulesync.model.nftables.NftOp.DeleteElement;
import io.rulesync.model.nftables.NftOp.DeleteSet;
import io.rulesync.model.nftables.NftOp.FlushChain;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What takes a node's {@code kube-proxy} table from one full transaction's content to another's, touching only what
 * changed, as kube-proxy's partial syncs do: new sets and maps; every new or changed chain declared, flushed and
 * written again whole; elements added and deleted (a changed value is a delete and an add); chains and affinity sets
 * that are gone flushed and deleted. A chain is deleted in a transaction of its own, after the main one: until then an
 * element removed in the main one may still refer to it (kube-proxy waits a second for older kernels; a second
 * transaction is enough on this one).
 *
 * @param main the transaction that changes the table
 * @param cleanup the chains to delete after it (empty when none)
 */
public record NftDelta(NftTransaction main, NftTransaction cleanup) {

    public static NftDelta between(NftTransaction from, NftTransaction to) {
        return between(NftContent.of(from), NftContent.of(to));
    }

    /** {@link #between(NftTransaction, NftTransaction)} of contents already read (an agent keeps the one it wrote). */
    public static NftDelta between(NftContent a, NftContent b) {
        if (a.family() != b.family()) {
            throw new IllegalArgumentException("a delta is within one family's table");
        }
        List<NftOp> ops = new ArrayList<>();
        b.sets().forEach((name, op) -> {
            if (!op.equals(a.sets().get(name))) {
                ops.add(op);
            }
        });
        List<String> changed = new ArrayList<>();
        b.chains().forEach((name, chain) -> {
            if (!chain.equals(a.chains().get(name))) {
                changed.add(name);
                ops.add(chain.declaration());
                ops.add(new FlushChain(name));
            }
        });
        a.elements().forEach((key, op) -> {
            AddElement now = b.elements().get(key);
            if (now == null
                    || !Objects.equals(now.value(), op.value())
                    || !Objects.equals(now.comment(), op.comment())) {
                ops.add(new DeleteElement(op.set(), op.key()));
            }
        });
        b.elements().forEach((key, op) -> {
            if (!op.equals(a.elements().get(key))) {
                ops.add(op);
            }
        });
        for (String name : changed) {
            b.chains().get(name).rules().forEach(r -> ops.add(new AddRule(name, r)));
        }
        List<NftOp> cleanup = new ArrayList<>();
        a.chains().keySet().stream()
                .filter(name -> !b.chains().containsKey(name))
                .forEach(name -> {
                    ops.add(new FlushChain(name));
                    cleanup.add(new DeleteChain(name));
                });
        a.sets().keySet().stream()
                .filter(name -> !b.sets().containsKey(name))
                .forEach(name -> ops.add(new DeleteSet(name)));
        return new NftDelta(new NftTransaction(b.family(), ops), new NftTransaction(b.family(), cleanup));
    }

    /** Whether nothing changes. */
    public boolean isEmpty() {
        return main.ops().isEmpty() && cleanup.ops().isEmpty();
    }
}
