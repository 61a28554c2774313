package io.rulesync.testsupport.cluster;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import java.time.Instant;

/** Cluster objects and events written as the YAML a user would write, for the compiler's tests. */
public final class Fixtures {
    public static final Instant T = Instant.parse("2026-11-29T12:00:00Z");

    private Fixtures() {}

    /** The one object in {@code yaml}, decoded (and so validated) like any manifest. */
    public static ClusterObject object(String yaml) {
        try {
            ManifestDecoder.Decoded d =
                    ManifestDecoder.decode(ManifestReader.parse("fixture", yaml).get(0));
            if (!(d instanceof ManifestDecoder.Decoded.Accepted a)) {
                throw new IllegalArgumentException("not a valid object: " + d);
            }
            return a.object();
        } catch (io.rulesync.model.manifest.ManifestException e) {
            throw new IllegalArgumentException(e);
        }
    }

    public static ClusterEvent upsert(String cluster, String yaml) {
        return new ObjectUpserted(cluster, object(yaml), "1", T);
    }

    public static String node(String name, String ip) {
        return "kind: Node\nmetadata: {name: " + name + "}\nstatus: {addresses: [{type: InternalIP, address: " + ip
                + "}]}\n";
    }

    public static String service(String name, String clusterIP) {
        return "kind: Service\nmetadata: {name: " + name + ", namespace: shop}\n" + "spec: {clusterIP: " + clusterIP
                + ", ports: [{name: http, port: 80}]}\n";
    }

    /** The slice {@code SERVICE-1} of shop/SERVICE: endpoints on {@code node}, port http 8080. */
    public static String slice(String service, String node, String... ips) {
        StringBuilder eps = new StringBuilder();
        for (String ip : ips) {
            eps.append("- {addresses: [")
                    .append(ip)
                    .append("], nodeName: ")
                    .append(node)
                    .append("}\n");
        }
        return "kind: EndpointSlice\napiVersion: discovery.k8s.io/v1\nmetadata: {name: " + service
                + "-1, namespace: shop, labels: {kubernetes.io/service-name: " + service + "}}\n"
                + "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints:\n" + eps;
    }
}
