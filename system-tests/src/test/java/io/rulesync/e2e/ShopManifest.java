package io.rulesync.e2e;

/** The one-Service cluster the pipeline tests write into a manifest folder: Service shop/web, node-a and web's slice. */
final class ShopManifest {
    private static final String WEB = """
            kind: Service
            metadata: {name: web, namespace: shop}
            spec: {clusterIP: 10.96.0.80, ports: [{name: http, port: 80, targetPort: 8080}]}
            ---
            kind: Node
            metadata: {name: node-a}
            status: {addresses: [{type: InternalIP, address: 192.168.0.1}]}
            ---
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
            addressType: IPv4
            ports: [{name: http, port: 8080}]
            endpoints: [ENDPOINTS]
            """;

    private ShopManifest() {}

    /** The manifest with {@code endpoints} (YAML flow entries) as web-1's endpoints. */
    static String web(String endpoints) {
        return WEB.replace("ENDPOINTS", endpoints);
    }
}
