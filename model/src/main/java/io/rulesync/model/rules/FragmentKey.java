package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import java.util.Objects;

/** Where a fragment sits in a cluster's rules: family, unit, node class. Sorts in rule order. */
public record FragmentKey(IpFamily family, Unit unit, Variant variant) implements Comparable<FragmentKey> {
    public FragmentKey {
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(variant, "variant");
    }

    @Override
    public int compareTo(FragmentKey o) {
        int c = family.compareTo(o.family);
        if (c != 0) {
            return c;
        }
        c = unit.compareTo(o.unit);
        return c != 0 ? c : variant.compareTo(o.variant);
    }
}
