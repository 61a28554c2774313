package io.rulesync.model.cluster;

import java.util.Comparator;

/** {@code namespace/name} of a namespaced object; both parts are validated Kubernetes names. */
public record NamespacedName(String namespace, String name) implements Comparable<NamespacedName> {
    private static final Comparator<NamespacedName> ORDER =
            Comparator.comparing(NamespacedName::namespace).thenComparing(NamespacedName::name);

    public NamespacedName {
        KubernetesNames.require("namespace", namespace, KubernetesNames.checkNamespace(namespace));
        KubernetesNames.require("name", name, KubernetesNames.checkSubdomain(name));
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }

    @Override
    public int compareTo(NamespacedName o) {
        return ORDER.compare(this, o);
    }
}
