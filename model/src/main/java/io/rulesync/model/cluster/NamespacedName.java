package io.rulesync.model.cluster;

/** {@code namespace/name} of a namespaced object; both parts are validated Kubernetes names. */
public record NamespacedName(String namespace, String name) implements Comparable<NamespacedName> {
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
        int c = namespace.compareTo(o.namespace);
        return c != 0 ? c : name.compareTo(o.name);
    }
}
