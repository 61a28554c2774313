package io.rulesync.model.event;

import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.LoadBalancerIngress;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The inverse of {@link io.rulesync.model.manifest.ManifestDecoder}: a model object as a Kubernetes
 * manifest holding only what rule compilation reads. Events carry objects in this shape, so the
 * compiler validates them with the same decoder (and the same messages) as files.
 */
public final class ManifestEncoder {
    /** Stands for "some other proxy owns this": the decoder only checks that the label exists. */
    private static final String IGNORED_BY = "not-rulesync";

    private ManifestEncoder() {}

    public static Map<String, Object> encode(ClusterObject o) {
        if (o instanceof Service s) {
            return service(s);
        }
        if (o instanceof EndpointSlice s) {
            return slice(s);
        }
        return node((Node) o);
    }

    private static Map<String, Object> service(Service s) {
        Map<String, Object> metadata = metadata(s.name().namespace(), s.name().name());
        if (s.ignored()) {
            metadata.put("labels", Map.of("service.kubernetes.io/service-proxy-name", IGNORED_BY));
        }
        if (s.ipvsScheduler() != null) {
            metadata.put("annotations", Map.of(Service.IPVS_SCHEDULER_ANNOTATION, s.ipvsScheduler()));
        }
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("type", s.type().apiName());
        if (s.type() != ServiceType.EXTERNAL_NAME) {
            spec.put("clusterIPs", s.clusterIPs().isEmpty() ? List.of("None") : strings(s.clusterIPs()));
        }
        List<Object> ports = new ArrayList<>();
        for (ServicePort p : s.ports()) {
            Map<String, Object> port = new LinkedHashMap<>();
            port.put("name", p.name());
            port.put("protocol", p.protocol().name());
            port.put("port", p.port());
            if (p.nodePort() != 0) {
                port.put("nodePort", p.nodePort());
            }
            ports.add(port);
        }
        spec.put("ports", ports);
        spec.put("externalIPs", strings(s.externalIPs()));
        spec.put(
                "loadBalancerSourceRanges",
                s.loadBalancerSourceRanges().stream().map(Cidr::toString).toList());
        spec.put("externalTrafficPolicy", policy(s.externalTrafficPolicy()));
        spec.put("internalTrafficPolicy", policy(s.internalTrafficPolicy()));
        if (s.affinityTimeoutSeconds() > 0) {
            spec.put("sessionAffinity", "ClientIP");
            spec.put("sessionAffinityConfig", Map.of("clientIP", Map.of("timeoutSeconds", s.affinityTimeoutSeconds())));
        } else {
            spec.put("sessionAffinity", "None");
        }
        if (s.healthCheckNodePort() != 0) {
            spec.put("healthCheckNodePort", s.healthCheckNodePort());
        }
        List<Object> ingress = new ArrayList<>();
        for (LoadBalancerIngress i : s.loadBalancerIngress()) {
            ingress.add(fields("ip", i.ip().toString(), "ipMode", i.proxyMode() ? "Proxy" : "VIP"));
        }
        Map<String, Object> out = head("v1", "Service", metadata);
        out.put("spec", spec);
        out.put("status", Map.of("loadBalancer", Map.of("ingress", ingress)));
        return out;
    }

    private static Map<String, Object> slice(EndpointSlice s) {
        Map<String, Object> metadata = metadata(s.name().namespace(), s.name().name());
        Map<String, Object> labels = new LinkedHashMap<>();
        labels.put("kubernetes.io/service-name", s.serviceName());
        // An FQDN slice is ignored by its address type alone; a labelled one needs the label back.
        if (s.ignored() && s.addressType() != AddressType.FQDN) {
            labels.put("service.kubernetes.io/service-proxy-name", IGNORED_BY);
        }
        metadata.put("labels", labels);
        Map<String, Object> out = head("discovery.k8s.io/v1", "EndpointSlice", metadata);
        out.put("addressType", s.addressType().apiName());
        List<Object> ports = new ArrayList<>();
        for (EndpointPort p : s.ports()) {
            Map<String, Object> port = new LinkedHashMap<>();
            port.put("name", p.name());
            port.put("protocol", p.protocol().name());
            if (p.port() != 0) {
                port.put("port", p.port());
            }
            ports.add(port);
        }
        out.put("ports", ports);
        List<Object> endpoints = new ArrayList<>();
        for (Endpoint e : s.endpoints()) {
            Map<String, Object> ep = new LinkedHashMap<>();
            ep.put("addresses", List.of(e.address().toString()));
            ep.put("conditions", fields("ready", e.ready(), "serving", e.serving(), "terminating", e.terminating()));
            if (!e.nodeName().isEmpty()) {
                ep.put("nodeName", e.nodeName());
            }
            if (!e.zone().isEmpty()) {
                ep.put("zone", e.zone());
            }
            Map<String, Object> hints = new LinkedHashMap<>();
            if (!e.zoneHints().isEmpty()) {
                hints.put("forZones", names(e.zoneHints()));
            }
            if (!e.nodeHints().isEmpty()) {
                hints.put("forNodes", names(e.nodeHints()));
            }
            if (!hints.isEmpty()) {
                ep.put("hints", hints);
            }
            endpoints.add(ep);
        }
        out.put("endpoints", endpoints);
        return out;
    }

    private static Map<String, Object> node(Node n) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("name", n.name());
        if (!n.labels().isEmpty()) {
            metadata.put("labels", new LinkedHashMap<>(n.labels())); // sorted: the wire form is hashed
        }
        List<Object> addresses = new ArrayList<>();
        for (Node.NodeAddress a : n.addresses()) {
            addresses.add(fields("type", a.type(), "address", a.address().toString()));
        }
        Map<String, Object> out = head("v1", "Node", metadata);
        out.put("status", Map.of("addresses", addresses));
        return out;
    }

    /**
     * A map of several fields in this order. Not Map.of: its iteration order changes from one JVM
     * run to the next, and the wire form is hashed ({@link Fingerprint}), so the watcher and the
     * compiler would disagree about the same object.
     */
    private static Map<String, Object> fields(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    private static Map<String, Object> head(String apiVersion, String kind, Map<String, Object> metadata) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("apiVersion", apiVersion);
        out.put("kind", kind);
        out.put("metadata", metadata);
        return out;
    }

    private static Map<String, Object> metadata(String namespace, String name) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("namespace", namespace);
        m.put("name", name);
        return m;
    }

    private static List<String> strings(List<IpAddress> ips) {
        return ips.stream().map(IpAddress::toString).toList();
    }

    private static List<Object> names(java.util.Set<String> names) {
        return names.stream().sorted().map(n -> (Object) Map.of("name", n)).toList();
    }

    private static String policy(TrafficPolicy p) {
        return p == TrafficPolicy.LOCAL ? "Local" : "Cluster";
    }
}
