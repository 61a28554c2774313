package io.rulesync.compiler.fold;

import io.rulesync.model.cluster.NamespacedName;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a fold touched, so that only that is recompiled: Services (whose own object or whose
 * EndpointSlices changed), any Node, the settings.
 */
public record Changes(Set<NamespacedName> services, boolean nodes, boolean settings) {
    public static final Changes NONE = new Changes(Set.of(), false, false);

    public Changes {
        services = Set.copyOf(services);
    }

    public Changes plus(Changes o) {
        if (o.isEmpty()) {
            return this;
        }
        Set<NamespacedName> s = new TreeSet<>(services);
        s.addAll(o.services);
        return new Changes(s, nodes || o.nodes, settings || o.settings);
    }

    public boolean isEmpty() {
        return services.isEmpty() && !nodes && !settings;
    }
}
