package io.rulesync.watcher.fleet;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import java.util.Objects;

/**
 * One cluster of the fleet.
 *
 * @param id       a DNS-1123 label; the Kafka key of all its events
 * @param source   how its objects are read
 * @param settings its kube-proxy settings, published as {@code SettingsChanged}
 */
public record ClusterSpec(String id, ClusterSource source, ClusterSettings settings) {
    public ClusterSpec {
        ClusterEvent.requireCluster(id);
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(settings, "settings");
    }
}
