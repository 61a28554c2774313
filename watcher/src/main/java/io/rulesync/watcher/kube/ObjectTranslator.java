package io.rulesync.watcher.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDocument;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * fabric8 objects to model objects: the object is turned into its generic JSON shape (what the API
 * server sent) and goes through the same {@link ManifestDecoder} as files and events, so an object
 * from a cluster is validated, defaulted and reported exactly like one from a manifest.
 */
public final class ObjectTranslator {
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private ObjectTranslator() {}

    /**
     * Decodes {@code object} as {@code kind}. Problems have no source (the caller names the cluster):
     * {@code Service shop/web: spec.ports[0].port: 0 is out of range (1-65535)}.
     */
    public static ManifestDecoder.Decoded decode(ObjectKind kind, HasMetadata object) {
        return ManifestDecoder.decode(new ManifestDocument("", manifest(kind, object)));
    }

    /** The object's JSON shape, with its kind and apiVersion (list items from the API server may lack them). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> manifest(ObjectKind kind, HasMetadata object) {
        Map<String, Object> map = new LinkedHashMap<>(SERIALIZATION.convertValue(object, Map.class));
        map.put("kind", kind.apiName());
        map.put("apiVersion", kind == ObjectKind.ENDPOINT_SLICE ? "discovery.k8s.io/v1" : "v1");
        if (map.get("metadata") instanceof Map<?, ?> meta && meta.containsKey("managedFields")) {
            Map<String, Object> m = new LinkedHashMap<>((Map<String, Object>) meta);
            m.remove("managedFields"); // large, and nothing in it matters for rules
            map.put("metadata", m);
        }
        return map;
    }

    /** The informer's key: {@code namespace/name}, or the name of a cluster-scoped object. */
    public static String key(HasMetadata object) {
        String ns = object.getMetadata().getNamespace();
        String name = object.getMetadata().getName();
        return ns == null || ns.isEmpty() ? name : ns + "/" + name;
    }
}
