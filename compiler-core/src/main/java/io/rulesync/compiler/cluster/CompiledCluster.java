package io.rulesync.compiler.cluster;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Unit;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import org.pcollections.TreePMap;

/**
 * A cluster's compiled rules ({@link ClusterRules}) plus what an incremental update needs to know:
 * the settings they were compiled with, each unit's endpoint count (for kube-proxy's large-cluster
 * threshold) and which units each Service owns. Immutable; updates share structure.
 */
public final class CompiledCluster {
    private final ClusterSettings settings;
    private final ClusterRules rules;
    private final Map<IpFamily, TreePMap<Unit, Integer>> endpointCounts;
    private final TreePMap<NamespacedName, Set<Unit>> unitsByService;

    CompiledCluster(
            ClusterSettings settings,
            ClusterRules rules,
            Map<IpFamily, TreePMap<Unit, Integer>> endpointCounts,
            TreePMap<NamespacedName, Set<Unit>> unitsByService) {
        this.settings = settings;
        this.rules = rules;
        this.endpointCounts = Map.copyOf(endpointCounts);
        this.unitsByService = unitsByService;
    }

    /**
     * The outcome of an update.
     *
     * @param touched the units whose fragments may differ from before; null when everything may
     *                (a full compile), in which case a diff must compare everything
     */
    public record Update(CompiledCluster compiled, Set<Unit> touched) {}

    public Update update(
            ClusterState state,
            ClusterSettings newSettings,
            Collection<NamespacedName> changedServices,
            boolean nodesChanged) {
        return ClusterCompiler.update(this, state, newSettings, changedServices, nodesChanged);
    }

    public ClusterSettings settings() {
        return settings;
    }

    public ClusterRules rules() {
        return rules;
    }

    Map<IpFamily, TreePMap<Unit, Integer>> endpointCounts() {
        return endpointCounts;
    }

    TreePMap<NamespacedName, Set<Unit>> unitsByService() {
        return unitsByService;
    }
}
