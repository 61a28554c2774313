package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import java.util.Comparator;
import java.util.Objects;

/** Where a fragment sits in a cluster's rules: family, unit, node class. Sorts in rule order. */
public record FragmentKey(IpFamily family, Unit unit, Variant variant) implements Comparable<FragmentKey> {
    private static final Comparator<FragmentKey> ORDER = Comparator.comparing(FragmentKey::family)
            .thenComparing(FragmentKey::unit)
            .thenComparing(FragmentKey::variant);

    public FragmentKey {
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(variant, "variant");
    }

    @Override
    public int compareTo(FragmentKey o) {
        return ORDER.compare(this, o);
    }
}
