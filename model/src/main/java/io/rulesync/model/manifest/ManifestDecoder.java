package io.rulesync.model.manifest;

import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.cluster.LoadBalancerIngress;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Ports;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.cluster.TrafficPolicy;
import io.rulesync.model.manifest.FieldReader.Problems;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Turns a parsed Kubernetes object into the validated model: applies the API server's defaults
 * (namespace {@code default}, protocol TCP, type ClusterIP, affinity timeout 10800 s, ...) and checks
 * every field the rules depend on. Anything wrong comes back as {@link Decoded.Rejected} with one
 * {@link Problem} per field; nothing half-decoded escapes.
 */
public final class ManifestDecoder {
    static final String LABEL_SERVICE_NAME = "kubernetes.io/service-name";
    static final String LABEL_PROXY_NAME = "service.kubernetes.io/service-proxy-name";
    static final String LABEL_HEADLESS = "service.kubernetes.io/headless";

    /** All annotations of an object together, keys and values, in bytes of UTF-8 (the API server's TotalAnnotationSizeLimitB). */
    public static final int MAX_ANNOTATIONS_BYTES = 256 * 1024;
    /** Endpoints in one EndpointSlice, and addresses in one endpoint (the API server's limits). */
    public static final int MAX_ENDPOINTS = 1000;

    public static final int MAX_ADDRESSES_PER_ENDPOINT = 100;

    /** The outcome of decoding one object. */
    public sealed interface Decoded {
        /** A valid Service, EndpointSlice or Node. */
        record Accepted(String source, ClusterObject object) implements Decoded {}

        /** An invalid object, with everything wrong with it. */
        record Rejected(List<Problem> problems) implements Decoded {}

        /** An object of a kind rule compilation does not read (a Deployment, a ConfigMap, ...). */
        record Skipped(String source, String kind) implements Decoded {}
    }

    private ManifestDecoder() {}

    public static Decoded decode(ManifestDocument doc) {
        Problems problems = new Problems(doc.source());
        FieldReader root = FieldReader.root(doc.content(), problems);
        String kind = root.field("kind").requiredString();
        if (kind == null) {
            return new Decoded.Rejected(problems.toList());
        }
        ClusterObject object;
        try {
            object = switch (kind) {
                case "Service" -> service(root, problems);
                case "EndpointSlice" -> endpointSlice(root, problems);
                case "Node" -> node(root, problems);
                default -> null;
            };
        } catch (IllegalArgumentException e) {
            // The model's own invariants caught something the field checks missed.
            problems.add("", e.getMessage());
            object = null;
        }
        if (kind.equals("Service") || kind.equals("EndpointSlice") || kind.equals("Node")) {
            sizes(root, kind);
        }
        if (!problems.isEmpty()) {
            return new Decoded.Rejected(problems.toList());
        }
        if (object == null) {
            return new Decoded.Skipped(doc.source(), kind);
        }
        return new Decoded.Accepted(doc.source(), object);
    }

    private static Service service(FieldReader root, Problems problems) {
        apiVersion(root, "v1");
        FieldReader meta = root.field("metadata");
        String namespace = namespace(meta);
        String name = name(meta, KubernetesNames::checkServiceName);
        problems.identify("Service " + KubernetesNames.printable(namespace + "/" + name));
        Map<String, String> labels = meta.field("labels").stringMap();
        boolean ignored = labels.containsKey(LABEL_PROXY_NAME) || labels.containsKey(LABEL_HEADLESS);
        FieldReader annotations = meta.field("annotations");
        String scheduler = annotations.stringMap().get(Service.IPVS_SCHEDULER_ANNOTATION);
        if (scheduler != null && Service.checkIpvsScheduler(scheduler) != null) {
            annotations.field(Service.IPVS_SCHEDULER_ANNOTATION).fail(Service.checkIpvsScheduler(scheduler));
        }

        FieldReader spec = root.field("spec");
        ServiceType type = parse(spec.field("type"), "ClusterIP", ServiceType::fromApiName);
        List<IpAddress> clusterIPs = clusterIPs(spec, type);

        List<ServicePort> ports = new ArrayList<>();
        List<FieldReader> portFields = spec.field("ports").list();
        Set<String> names = new HashSet<>();
        for (FieldReader pf : portFields) {
            FieldReader nameField = pf.field("name");
            String portName = nameField.string("");
            check(nameField, KubernetesNames.checkPortName(portName));
            if (portName.isEmpty() && portFields.size() > 1) {
                nameField.fail("is required when a Service has more than one port");
            } else if (!names.add(portName)) {
                nameField.fail("duplicate port name '" + KubernetesNames.printable(portName) + "'");
            }
            Protocol protocol = parse(pf.field("protocol"), "TCP", ManifestDecoder::protocol);
            int port = port(pf.field("port"), true);
            int nodePort = port(pf.field("nodePort"), false);
            if (problems.isEmpty()) {
                ports.add(new ServicePort(portName, protocol, port, nodePort));
            }
        }

        List<IpAddress> externalIPs = new ArrayList<>();
        for (FieldReader f : spec.field("externalIPs").list()) {
            add(externalIPs, strictIp(f, null, true));
        }
        List<Cidr> sourceRanges = new ArrayList<>();
        for (FieldReader f : spec.field("loadBalancerSourceRanges").list()) {
            add(sourceRanges, cidr(f));
        }
        TrafficPolicy etp = parse(spec.field("externalTrafficPolicy"), "Cluster", TrafficPolicy::fromApiName);
        TrafficPolicy itp = parse(spec.field("internalTrafficPolicy"), "Cluster", TrafficPolicy::fromApiName);

        int affinityTimeout = 0;
        FieldReader affinity = spec.field("sessionAffinity");
        String affinityType = affinity.string("None");
        if (affinityType.equals("ClientIP")) {
            FieldReader timeout =
                    spec.field("sessionAffinityConfig").field("clientIP").field("timeoutSeconds");
            long t = timeout.integer(Ports.DEFAULT_AFFINITY_TIMEOUT_SECONDS);
            if (t < 1 || t > Ports.MAX_AFFINITY_TIMEOUT_SECONDS) {
                timeout.fail(t + " is out of range (1-" + Ports.MAX_AFFINITY_TIMEOUT_SECONDS + ")");
            } else {
                affinityTimeout = (int) t;
            }
        } else if (!affinityType.equals("None")) {
            affinity.fail("'" + KubernetesNames.printable(affinityType)
                    + "' is not a session affinity (expected None or ClientIP)");
        }
        int healthCheckNodePort = port(spec.field("healthCheckNodePort"), false);

        List<LoadBalancerIngress> ingress = new ArrayList<>();
        for (FieldReader f :
                root.field("status").field("loadBalancer").field("ingress").list()) {
            FieldReader ipField = f.field("ip");
            if (!ipField.present()) {
                continue; // hostname-only ingress: kube-proxy writes no rule for it
            }
            // The API server checks only the form here, not the range (ValidateLoadBalancerStatus):
            // ClusterRules leaves special ones out of the rules instead.
            IpAddress ip = strictIp(ipField, null, false);
            FieldReader modeField = f.field("ipMode");
            String mode = modeField.string("VIP");
            if (!mode.equals("VIP") && !mode.equals("Proxy")) {
                modeField.fail("'" + KubernetesNames.printable(mode) + "' is not an ipMode (expected VIP or Proxy)");
            }
            if (ip != null) {
                ingress.add(new LoadBalancerIngress(ip, mode.equals("Proxy")));
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        return new Service(
                new NamespacedName(namespace, name),
                type,
                clusterIPs,
                ports,
                externalIPs,
                ingress,
                sourceRanges,
                etp,
                itp,
                affinityTimeout,
                healthCheckNodePort,
                ignored,
                scheduler);
    }

    /**
     * {@code clusterIPs} wins over {@code clusterIP}; when both are set the first must equal
     * {@code clusterIP}, as the API server requires. {@code None} (headless), an unallocated empty
     * value and ExternalName Services all give no addresses: kube-proxy writes no rules for them.
     */
    private static List<IpAddress> clusterIPs(FieldReader spec, ServiceType type) {
        FieldReader single = spec.field("clusterIP");
        String clusterIP = single.string("");
        List<FieldReader> many = spec.field("clusterIPs").list();
        if (type == ServiceType.EXTERNAL_NAME || clusterIP.equals("None")) {
            return List.of();
        }
        List<IpAddress> out = new ArrayList<>();
        if (many.isEmpty()) {
            if (!clusterIP.isEmpty()) {
                add(out, strictIp(single, null, true));
            }
            return out;
        }
        for (FieldReader f : many) {
            String s = f.string("");
            if (s.equals("None")) {
                return List.of();
            }
            add(out, strictIp(f, null, true));
        }
        if (!clusterIP.isEmpty() && !out.isEmpty() && !many.get(0).string("").equals(clusterIP)) {
            many.get(0).fail("must equal spec.clusterIP (" + KubernetesNames.printable(clusterIP) + ")");
        }
        if (out.size() > 2
                || (out.size() == 2 && out.get(0).family() == out.get(1).family())) {
            spec.field("clusterIPs").fail("holds at most one address of each IP family");
        }
        return out;
    }

    private static EndpointSlice endpointSlice(FieldReader root, Problems problems) {
        apiVersion(root, "discovery.k8s.io/v1");
        FieldReader meta = root.field("metadata");
        String namespace = namespace(meta);
        String name = name(meta, KubernetesNames::checkSubdomain);
        problems.identify("EndpointSlice " + KubernetesNames.printable(namespace + "/" + name));
        FieldReader labelsField = meta.field("labels");
        Map<String, String> labels = labelsField.stringMap();
        String serviceName = labels.get(LABEL_SERVICE_NAME);
        FieldReader serviceLabel = labelsField.field(LABEL_SERVICE_NAME);
        if (serviceName == null) {
            serviceLabel.fail("is required: it names the Service this slice belongs to");
        } else {
            check(serviceLabel, KubernetesNames.checkServiceName(serviceName));
        }
        FieldReader typeField = root.field("addressType");
        AddressType addressType = typeField.present() ? parse(typeField, null, AddressType::fromApiName) : null;
        if (addressType == null && !typeField.present()) {
            typeField.fail("is required (IPv4, IPv6 or FQDN)");
        }

        List<EndpointPort> ports = new ArrayList<>();
        for (FieldReader pf : root.field("ports").list()) {
            FieldReader nameField = pf.field("name");
            String portName = nameField.string("");
            check(nameField, KubernetesNames.checkPortName(portName));
            Protocol protocol = parse(pf.field("protocol"), "TCP", ManifestDecoder::protocol);
            int port = port(pf.field("port"), false);
            if (problems.isEmpty()) {
                ports.add(new EndpointPort(portName, protocol, port));
            }
        }

        List<Endpoint> endpoints = new ArrayList<>();
        for (FieldReader ef : root.field("endpoints").list()) {
            FieldReader addressesField = ef.field("addresses");
            List<FieldReader> addresses = addressesField.list();
            if (addresses.isEmpty()) {
                addressesField.fail("needs at least one address");
                continue;
            }
            if (addressType == AddressType.FQDN || addressType == null) {
                continue; // kube-proxy does not proxy to FQDN slices
            }
            IpFamily family = addressType == AddressType.IPV4 ? IpFamily.IPV4 : IpFamily.IPV6;
            IpAddress first = null;
            for (FieldReader af : addresses) {
                IpAddress ip = strictIp(af, family, true);
                if (first == null) {
                    first = ip;
                }
            }
            FieldReader conditions = ef.field("conditions");
            Boolean ready = conditions.field("ready").bool();
            Boolean serving = conditions.field("serving").bool();
            Boolean terminating = conditions.field("terminating").bool();
            FieldReader nodeField = ef.field("nodeName");
            String nodeName = nodeField.string("");
            if (!nodeName.isEmpty()) {
                check(nodeField, KubernetesNames.checkSubdomain(nodeName));
            }
            String zone = ef.field("zone").string("");
            FieldReader hints = ef.field("hints");
            Set<String> zoneHints = hintNames(hints.field("forZones"));
            Set<String> nodeHints = hintNames(hints.field("forNodes"));
            if (first != null && problems.isEmpty()) {
                // nil conditions are read the way kube-proxy reads them.
                endpoints.add(new Endpoint(
                        first,
                        ready == null || ready,
                        serving == null || serving,
                        terminating != null && terminating,
                        nodeName,
                        zone,
                        zoneHints,
                        nodeHints));
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        boolean ignored = labels.containsKey(LABEL_PROXY_NAME)
                || labels.containsKey(LABEL_HEADLESS)
                || addressType == AddressType.FQDN;
        return new EndpointSlice(
                new NamespacedName(namespace, name), serviceName, addressType, ports, endpoints, ignored);
    }

    private static Set<String> hintNames(FieldReader list) {
        Set<String> out = new LinkedHashSet<>();
        for (FieldReader h : list.list()) {
            String n = h.field("name").requiredString();
            if (n != null) {
                out.add(n);
            }
        }
        return out;
    }

    private static Node node(FieldReader root, Problems problems) {
        apiVersion(root, "v1");
        FieldReader meta = root.field("metadata");
        String name = name(meta, KubernetesNames::checkSubdomain);
        problems.identify("Node " + KubernetesNames.printable(name));
        Map<String, String> labels = meta.field("labels").stringMap();
        List<Node.NodeAddress> addresses = new ArrayList<>();
        for (FieldReader af : root.field("status").field("addresses").list()) {
            String type = af.field("type").requiredString();
            FieldReader addressField = af.field("address");
            String address = addressField.requiredString();
            if (type == null || address == null) {
                continue;
            }
            if (type.equals("InternalIP") || type.equals("ExternalIP")) {
                IpAddress ip = ip(addressField, null);
                if (ip != null) {
                    addresses.add(new Node.NodeAddress(type, ip));
                }
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        return Node.labelled(name, labels, addresses);
    }

    /**
     * What the API server bounds in every object: label keys and values, annotation keys, and all
     * annotations together; and the endpoints of an EndpointSlice. Such an object could never exist
     * in a cluster, and a huge annotation would otherwise be carried through every read and event.
     */
    private static void sizes(FieldReader root, String kind) {
        FieldReader meta = root.field("metadata");
        if (!meta.isMapping()) {
            return; // reported already
        }
        FieldReader labels = meta.field("labels");
        for (Map.Entry<String, String> e : labels.stringEntries().entrySet()) {
            check(labels.key(e.getKey()), KubernetesNames.checkQualifiedName(e.getKey()));
            check(labels.key(e.getKey()), KubernetesNames.checkLabelValue(e.getValue()));
        }
        FieldReader annotations = meta.field("annotations");
        long total = 0;
        for (Map.Entry<String, String> e : annotations.stringEntries().entrySet()) {
            // The API server checks annotation keys in lower case.
            check(
                    annotations.key(e.getKey()),
                    KubernetesNames.checkQualifiedName(e.getKey().toLowerCase(Locale.ROOT)));
            total += e.getKey().getBytes(StandardCharsets.UTF_8).length
                    + e.getValue().getBytes(StandardCharsets.UTF_8).length;
        }
        if (total > MAX_ANNOTATIONS_BYTES) {
            annotations.fail(String.format(
                    Locale.ROOT,
                    "hold %,d bytes in all, over the limit of %,d (256 KiB) per object",
                    total,
                    MAX_ANNOTATIONS_BYTES));
        }
        if (kind.equals("EndpointSlice")) {
            FieldReader endpoints = root.field("endpoints");
            if (endpoints.size() > MAX_ENDPOINTS) {
                endpoints.fail(String.format(
                        Locale.ROOT,
                        "holds %,d endpoints, over the limit of %,d per EndpointSlice",
                        endpoints.size(),
                        MAX_ENDPOINTS));
            }
            for (FieldReader ef : endpoints.size() == 0 || endpoints.size() > MAX_ENDPOINTS
                    ? List.<FieldReader>of()
                    : endpoints.list()) {
                FieldReader addresses = ef.isMapping() ? ef.field("addresses") : null;
                if (addresses != null && addresses.size() > MAX_ADDRESSES_PER_ENDPOINT) {
                    addresses.fail("holds " + addresses.size() + " addresses, over the limit of "
                            + MAX_ADDRESSES_PER_ENDPOINT + " per endpoint");
                }
            }
        }
    }

    private static void apiVersion(FieldReader root, String expected) {
        FieldReader f = root.field("apiVersion");
        String v = f.string(expected);
        if (!v.equals(expected)) {
            f.fail("'" + KubernetesNames.printable(v) + "' is not supported (expected " + expected + ")");
        }
    }

    private static String namespace(FieldReader meta) {
        FieldReader f = meta.field("namespace");
        String ns = f.string("default");
        check(f, KubernetesNames.checkNamespace(ns));
        return ns;
    }

    private static String name(FieldReader meta, Function<String, String> rule) {
        FieldReader f = meta.field("name");
        String name = f.requiredString();
        if (name != null) {
            check(f, rule.apply(name));
        }
        return name == null ? "" : name;
    }

    private static Protocol protocol(String s) {
        return switch (s) {
            case "TCP" -> Protocol.TCP;
            case "UDP" -> Protocol.UDP;
            case "SCTP" -> Protocol.SCTP;
            default ->
                throw new IllegalArgumentException(
                        "'" + KubernetesNames.printable(s) + "' is not a protocol (expected TCP, UDP or SCTP)");
        };
    }

    /** A port number; 0 when absent and not required. */
    private static int port(FieldReader f, boolean required) {
        if (!f.present()) {
            if (required) {
                f.fail("is required");
            }
            return 0;
        }
        Long v = f.integerOrNull();
        if (v == null) {
            return 0;
        }
        String problem = Ports.checkPort(v);
        if (problem != null) {
            f.fail(problem);
            return 0;
        }
        return v.intValue();
    }

    private static IpAddress ip(FieldReader f, IpFamily family) {
        String s = f.requiredString();
        if (s == null) {
            return null;
        }
        try {
            IpAddress ip = IpAddress.parse(s);
            if (family != null && ip.family() != family) {
                f.fail(ip + " is not an " + (family == IpFamily.IPV4 ? "IPv4" : "IPv6") + " address");
                return null;
            }
            return ip;
        } catch (IllegalArgumentException e) {
            f.fail("'" + KubernetesNames.printable(s) + "' is not a valid IP address");
            return null;
        }
    }

    /**
     * An address of a field the API server validates strictly (KEP-4858's StrictIPCIDRValidation:
     * no IPv4-mapped IPv6; leading zeros and zone ids do not parse at all) and, when
     * {@code nonSpecial}, as {@code ValidateNonSpecialIP} does: never unspecified, loopback,
     * link-local (the cloud metadata service) or link-local multicast, where traffic would reach the
     * node itself. Node addresses are neither: the API server does not validate them.
     */
    private static IpAddress strictIp(FieldReader f, IpFamily family, boolean nonSpecial) {
        IpAddress ip = ip(f, family);
        if (ip == null) {
            return null;
        }
        String written = KubernetesNames.printable(f.string(""));
        if (ip.isIpv4Mapped()) {
            f.fail(written + " is an IPv4-mapped IPv6 address (the API server refuses it)");
            return null;
        }
        Optional<SpecialRange> special = nonSpecial ? ip.specialRange() : Optional.empty();
        if (special.isPresent()) {
            f.fail(written + " is " + special.get().label() + " (the API server refuses it)");
            return null;
        }
        return ip;
    }

    private static Cidr cidr(FieldReader f) {
        String s = f.requiredString();
        if (s == null) {
            return null;
        }
        try {
            return Cidr.parse(s);
        } catch (IllegalArgumentException e) {
            f.fail(e.getMessage());
            return null;
        }
    }

    private static <T> T parse(FieldReader f, String defaultValue, Function<String, T> parser) {
        String s = f.string(defaultValue);
        if (s == null) {
            return null;
        }
        try {
            return parser.apply(s);
        } catch (IllegalArgumentException e) {
            f.fail(e.getMessage());
            return null;
        }
    }

    private static void check(FieldReader f, String problem) {
        if (problem != null) {
            f.fail(problem);
        }
    }

    private static <T> void add(List<T> list, T value) {
        if (value != null) {
            list.add(value);
        }
    }
}
