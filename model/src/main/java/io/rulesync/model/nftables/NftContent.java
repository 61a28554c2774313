package io.rulesync.model.nftables;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftOp.AddChain;
import io.rulesync.model.nftables.NftOp.AddElement;
import io.rulesync.model.nftables.NftOp.AddMap;
import io.rulesync.model.nftables.NftOp.AddRule;
import io.rulesync.model.nftables.NftOp.AddSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a full transaction leaves in a {@code kube-proxy} table, by name: its sets and maps, its chains with their rules
 * in order, and its elements by set and key. What {@link NftDelta} compares, and what an agent keeps of the table it
 * wrote.
 */
public final class NftContent {
    /** A chain as a full transaction leaves it: how it is declared and its rules in order. */
    public record Chain(AddChain declaration, List<String> rules) {}

    private final IpFamily family;
    private final Map<String, NftOp> sets = new LinkedHashMap<>();
    private final Map<String, Chain> chains = new LinkedHashMap<>();
    private final Map<String, AddElement> elements = new LinkedHashMap<>();

    private NftContent(IpFamily family) {
        this.family = family;
    }

    /** @throws IllegalArgumentException for an operation a full transaction does not hold (a delete, say) */
    public static NftContent of(NftTransaction t) {
        NftContent c = new NftContent(t.family());
        for (NftOp op : t.ops()) {
            if (op instanceof AddChain ch) {
                c.chains.putIfAbsent(ch.name(), new Chain(ch, new ArrayList<>()));
            } else if (op instanceof AddRule r) {
                c.chains.get(r.chain()).rules().add(r.rule());
            } else if (op instanceof AddSet s) {
                c.sets.put(s.name(), s);
            } else if (op instanceof AddMap m) {
                c.sets.put(m.name(), m);
            } else if (op instanceof AddElement e) {
                c.elements.put(e.set() + " " + e.key(), e);
            } else if (!(op instanceof NftOp.FlushChain
                    || op instanceof NftOp.FlushSet
                    || op instanceof NftOp.AddTable)) {
                throw new IllegalArgumentException("not a full transaction's operation: " + op);
            }
        }
        return c;
    }

    public IpFamily family() {
        return family;
    }

    /** Sets and maps by name ({@link AddSet} or {@link AddMap}). */
    public Map<String, NftOp> sets() {
        return Collections.unmodifiableMap(sets);
    }

    public Map<String, Chain> chains() {
        return Collections.unmodifiableMap(chains);
    }

    /** Elements by {@code SET KEY}. */
    public Map<String, AddElement> elements() {
        return Collections.unmodifiableMap(elements);
    }
}
