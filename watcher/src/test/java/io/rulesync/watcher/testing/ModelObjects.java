package io.rulesync.watcher.testing;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;

/** Model objects from short YAML, for tests. */
public final class ModelObjects {
    private ModelObjects() {}

    public static ClusterObject parse(String yaml) {
        try {
            return ((ManifestDecoder.Decoded.Accepted) ManifestDecoder.decode(
                            ManifestReader.parse("test.yaml", yaml).get(0)))
                    .object();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** A ClusterIP Service {@code namespace/name} with one port. */
    public static ClusterObject service(String namespace, String name, int port) {
        return parse("kind: Service\nmetadata: {namespace: " + namespace + ", name: " + name + "}\n"
                + "spec: {clusterIP: 10.96.0.10, ports: [{port: " + port + "}]}");
    }

    public static ClusterObject node(String name, String ip) {
        return parse("kind: Node\nmetadata: {name: " + name + "}\nstatus: {addresses: [{type: InternalIP, address: "
                + ip + "}]}");
    }
}
