package io.rulesync.watcher.fleet;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The clusters one watcher process watches.
 *
 * @param file the fleet file it was read from, if any: the watcher re-reads it to pick up changed
 *             settings
 */
public record FleetConfig(Optional<Path> file, List<ClusterSpec> clusters) {
    public FleetConfig {
        Objects.requireNonNull(file, "file");
        clusters = List.copyOf(clusters);
        Set<String> ids = new HashSet<>();
        for (ClusterSpec c : clusters) {
            if (!ids.add(c.id())) {
                throw new IllegalArgumentException("cluster id '" + c.id() + "' appears twice");
            }
        }
    }

    /** A fleet built in code (no file to re-read). */
    public static FleetConfig of(ClusterSpec... clusters) {
        return new FleetConfig(Optional.empty(), List.of(clusters));
    }

    public Optional<ClusterSpec> cluster(String id) {
        return clusters.stream().filter(c -> c.id().equals(id)).findFirst();
    }
}
