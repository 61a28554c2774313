package io.rulesync.model.event;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import java.util.Comparator;
import java.util.Objects;

/** Kind plus key ({@code namespace/name}, or the name of a Node) of a watched object. */
public record ObjectRef(ObjectKind kind, String key) implements Comparable<ObjectRef> {
    private static final Comparator<ObjectRef> ORDER =
            Comparator.comparing(ObjectRef::kind).thenComparing(ObjectRef::key);

    public ObjectRef {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(key, "key");
        if (kind == ObjectKind.NODE) {
            String p = KubernetesNames.checkSubdomain(key);
            if (p != null) {
                throw new IllegalArgumentException("key: " + p);
            }
        } else {
            namespacedName(key);
        }
    }

    public static ObjectRef of(ClusterObject o) {
        if (o instanceof Service s) {
            return new ObjectRef(ObjectKind.SERVICE, s.key());
        }
        if (o instanceof EndpointSlice s) {
            return new ObjectRef(ObjectKind.ENDPOINT_SLICE, s.key());
        }
        return new ObjectRef(ObjectKind.NODE, ((Node) o).key());
    }

    /** The key as a namespaced name (not for Nodes). */
    public NamespacedName name() {
        if (kind == ObjectKind.NODE) {
            throw new IllegalStateException("a Node has no namespace");
        }
        return namespacedName(key);
    }

    private static NamespacedName namespacedName(String key) {
        int slash = key.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("key: '" + KubernetesNames.printable(key) + "' is not namespace/name");
        }
        return new NamespacedName(key.substring(0, slash), key.substring(slash + 1));
    }

    @Override
    public int compareTo(ObjectRef o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        return kind.apiName() + " " + key;
    }
}
