package io.rulesync.model.event;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.KubernetesNames;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A fact about one cluster, as the watcher saw it. Events carry whole object states (not patches), so
 * folding them is level-based: the latest event for a key says everything about that key.
 */
public sealed interface ClusterEvent {
    /** The cluster id from the fleet file: a DNS-1123 label. */
    String cluster();

    /** When the watcher saw the change. */
    Instant observedAt();

    static String requireCluster(String cluster) {
        String p = KubernetesNames.checkNamespace(cluster);
        if (p != null) {
            throw new IllegalArgumentException("cluster: " + p);
        }
        return cluster;
    }

    /** An object was created or changed; it is now exactly {@code object}. */
    record ObjectUpserted(String cluster, ClusterObject object, String resourceVersion, Instant observedAt)
            implements ClusterEvent {
        public ObjectUpserted {
            requireCluster(cluster);
            Objects.requireNonNull(object, "object");
            resourceVersion = resourceVersion == null ? "" : resourceVersion;
            Objects.requireNonNull(observedAt, "observedAt");
        }

        public ObjectRef ref() {
            return ObjectRef.of(object);
        }
    }

    /** An object is gone. */
    record ObjectDeleted(String cluster, ObjectRef ref, String resourceVersion, Instant observedAt)
            implements ClusterEvent {
        public ObjectDeleted {
            requireCluster(cluster);
            Objects.requireNonNull(ref, "ref");
            resourceVersion = resourceVersion == null ? "" : resourceVersion;
            Objects.requireNonNull(observedAt, "observedAt");
        }
    }

    /**
     * After a (re)list of one kind: exactly these keys exist. Anything else of that kind was deleted
     * while the watcher was not looking.
     */
    record SyncMarker(String cluster, ObjectKind kind, Set<String> keys, Instant observedAt) implements ClusterEvent {
        public SyncMarker {
            requireCluster(cluster);
            Objects.requireNonNull(kind, "kind");
            keys = Set.copyOf(new TreeSet<>(keys));
            for (String k : keys) {
                new ObjectRef(kind, k); // validates the key
            }
            Objects.requireNonNull(observedAt, "observedAt");
        }

        /** The keys in order (the set itself has none). */
        public List<String> sortedKeys() {
            return List.copyOf(new TreeSet<>(keys));
        }
    }

    /** The cluster's proxy settings, published when a watcher starts and whenever they change. */
    record SettingsChanged(String cluster, ClusterSettings settings, Instant observedAt) implements ClusterEvent {
        public SettingsChanged {
            requireCluster(cluster);
            Objects.requireNonNull(settings, "settings");
            Objects.requireNonNull(observedAt, "observedAt");
        }
    }
}
