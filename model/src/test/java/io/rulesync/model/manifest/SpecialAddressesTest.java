package io.rulesync.model.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A probe of special addresses, kept: every address the API server refuses, in every field it refuses it
 * in, is refused by the decoder with the field and the reason; the addresses next to them that it
 * accepts still pass; and the fields where the API server checks only the form (load-balancer
 * ingress) or nothing at all (Node addresses) accept special addresses as it does.
 */
class SpecialAddressesTest {

    /** Address, family, and what the decoder says about it ("is loopback"...); null: it passes. */
    record Case(String address, boolean ipv6, String verdict) {}

    static final List<Case> ADDRESSES = List.of(
            new Case("127.0.0.1", false, "is loopback"),
            new Case("127.255.255.254", false, "is loopback"),
            new Case("169.254.169.254", false, "is link-local"),
            new Case("169.254.0.1", false, "is link-local"),
            new Case("0.0.0.0", false, "is unspecified"),
            new Case("224.0.0.1", false, "is link-local multicast"),
            new Case("224.0.0.251", false, "is link-local multicast"),
            new Case("::1", true, "is loopback"),
            new Case("::", true, "is unspecified"),
            new Case("fe80::1", true, "is link-local"),
            new Case("febf:ffff::1", true, "is link-local"),
            new Case("ff02::1", true, "is link-local multicast"),
            new Case("ff12::1:2", true, "is link-local multicast"),
            new Case("::ffff:127.0.0.1", true, "is an IPv4-mapped IPv6 address"),
            new Case("::ffff:169.254.169.254", true, "is an IPv4-mapped IPv6 address"),
            new Case("::ffff:10.0.0.1", true, "is an IPv4-mapped IPv6 address"),
            // Controls: right next to the refused ranges, or simply ordinary, and accepted.
            new Case("10.0.0.1", false, null),
            new Case("192.0.2.10", false, null),
            new Case("8.8.8.8", false, null),
            new Case("126.255.255.255", false, null),
            new Case("128.0.0.1", false, null),
            new Case("169.253.255.255", false, null),
            new Case("169.255.0.1", false, null),
            new Case("224.0.1.1", false, null),
            new Case("239.1.2.3", false, null),
            new Case("2001:db8::1", true, null),
            new Case("fd00:10::1", true, null),
            new Case("fec0::1", true, null),
            new Case("ff05::1", true, null),
            new Case("::2", true, null),
            new Case("64:ff9b::a00:1", true, null));

    /** A field where the API server refuses special addresses: a manifest with the address in it, and the field's path. */
    record Field(String name, String path, String ipv4Manifest, String ipv6Manifest) {
        String manifest(Case c) {
            return (c.ipv6() ? ipv6Manifest : ipv4Manifest).replace("ADDR", "\"" + c.address() + "\"");
        }
    }

    static final List<Field> REFUSING_FIELDS = List.of(
            new Field("an EndpointSlice's first address", "endpoints[0].addresses[0]", """
                    kind: EndpointSlice
                    apiVersion: discovery.k8s.io/v1
                    metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                    addressType: IPv4
                    ports: [{name: http, port: 8080}]
                    endpoints: [{addresses: [ADDR]}]
                    """, """
                    kind: EndpointSlice
                    apiVersion: discovery.k8s.io/v1
                    metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                    addressType: IPv6
                    ports: [{name: http, port: 8080}]
                    endpoints: [{addresses: [ADDR]}]
                    """),
            new Field(
                    "an EndpointSlice's later address (kube-proxy reads only the first; the API server checks all)",
                    "endpoints[1].addresses[1]",
                    """
                    kind: EndpointSlice
                    apiVersion: discovery.k8s.io/v1
                    metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                    addressType: IPv4
                    endpoints: [{addresses: [10.0.0.9]}, {addresses: [10.0.0.8, ADDR]}]
                    """,
                    """
                    kind: EndpointSlice
                    apiVersion: discovery.k8s.io/v1
                    metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                    addressType: IPv6
                    endpoints: [{addresses: ["fd00::9"]}, {addresses: ["fd00::8", ADDR]}]
                    """),
            new Field("an external IP", "spec.externalIPs[1]", """
                    kind: Service
                    metadata: {name: web, namespace: shop}
                    spec: {clusterIP: 10.96.0.10, externalIPs: [203.0.113.7, ADDR], ports: [{port: 80}]}
                    """, """
                    kind: Service
                    metadata: {name: web, namespace: shop}
                    spec: {clusterIP: "fd00:96::10", externalIPs: ["2001:db8::7", ADDR], ports: [{port: 80}]}
                    """),
            new Field("spec.clusterIP", "spec.clusterIP", """
                    kind: Service
                    metadata: {name: web, namespace: shop}
                    spec: {clusterIP: ADDR, ports: [{port: 80}]}
                    """, """
                    kind: Service
                    metadata: {name: web, namespace: shop}
                    spec: {clusterIP: ADDR, ports: [{port: 80}]}
                    """),
            new Field("spec.clusterIPs (the second family of a dual-stack Service)", "spec.clusterIPs[1]", """
                    kind: Service
                    metadata: {name: web, namespace: shop}
                    spec: {clusterIP: "fd00:96::10", clusterIPs: ["fd00:96::10", ADDR], ports: [{port: 80}]}
                    """, """
                    kind: Service
                    metadata: {name: web, namespace: shop}
                    spec: {clusterIP: 10.96.0.10, clusterIPs: [10.96.0.10, ADDR], ports: [{port: 80}]}
                    """));

    static Stream<Arguments> refusingFields() {
        List<Arguments> out = new ArrayList<>();
        for (Field f : REFUSING_FIELDS) {
            for (Case c : ADDRESSES) {
                out.add(Arguments.of(f, c));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("refusingFields")
    void fieldsCheckedAsValidateNonSpecialIPRefuseSpecialAddressesWithTheFieldAndWhy(Field field, Case c)
            throws Exception {
        Decoded d = decode(field.manifest(c));
        if (c.verdict() == null) {
            assertThat(d).isInstanceOf(Decoded.Accepted.class);
        } else {
            assertThat(d).isInstanceOf(Decoded.Rejected.class);
            assertThat(((Decoded.Rejected) d).problems())
                    .extracting(p -> p.field() + ": " + p.message())
                    .containsExactly(
                            field.path() + ": " + c.address() + " " + c.verdict() + " (the API server refuses it)");
        }
    }

    /** ValidateLoadBalancerStatus checks an ingress IP's form only: special ranges pass (the compiler leaves them out of the rules). */
    @ParameterizedTest(name = "status.loadBalancer.ingress = {0}")
    @MethodSource("addresses")
    void loadBalancerIngressRefusesOnlyWhatTheStrictFormRefuses(Case c) throws Exception {
        Decoded d = decode("""
                kind: Service
                metadata: {name: web, namespace: shop}
                spec: {type: LoadBalancer, clusterIP: %s, ports: [{port: 80, nodePort: 30080}]}
                status: {loadBalancer: {ingress: [{hostname: lb.example.com}, {ip: "%s"}]}}
                """.formatted(c.ipv6() ? "\"fd00:96::10\"" : "10.96.0.10", c.address()));
        if (IpAddress.parse(c.address()).isIpv4Mapped()) {
            assertThat(((Decoded.Rejected) d).problems())
                    .extracting(p -> p.field() + ": " + p.message())
                    .containsExactly("status.loadBalancer.ingress[1].ip: " + c.address()
                            + " is an IPv4-mapped IPv6 address (the API server refuses it)");
        } else {
            assertThat(d).isInstanceOf(Decoded.Accepted.class);
        }
    }

    /** The API server does not validate a Node's addresses at all; the decoder only needs them to parse. */
    @ParameterizedTest(name = "status.addresses = {0}")
    @MethodSource("addresses")
    void nodeAddressesAreNotValidatedByTheApiServerSoSpecialOnesPass(Case c) throws Exception {
        assertThat(decode("""
                kind: Node
                metadata: {name: n1}
                status: {addresses: [{type: InternalIP, address: "%s"}]}
                """.formatted(c.address()))).isInstanceOf(Decoded.Accepted.class);
    }

    static Stream<Case> addresses() {
        return ADDRESSES.stream();
    }

    /** Forms that never parse: leading zeros (octal to libc, CVE-2021-29923) and zone ids. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {"010.0.0.1", "10.0.0.01", "fe80::1%eth0", "::1%1", "[::1]"})
    void ambiguousFormsAreRefusedEverywhere(String address) throws Exception {
        for (Field f : REFUSING_FIELDS) {
            Decoded d = decode(f.manifest(new Case(address, address.contains(":"), null)));
            assertThat(((Decoded.Rejected) d).problems())
                    .extracting(p -> p.field() + ": " + p.message())
                    .containsExactly(f.path() + ": '" + address + "' is not a valid IP address");
        }
        Decoded node = decode("""
                kind: Node
                metadata: {name: n1}
                status: {addresses: [{type: InternalIP, address: "%s"}]}
                """.formatted(address));
        assertThat(node).isInstanceOf(Decoded.Rejected.class);
    }

    /** The classification itself follows Go's net.IP, including IPv4-mapped addresses judged as IPv4. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("addresses")
    void specialRangeFollowsGo(Case c) {
        IpAddress ip = IpAddress.parse(c.address());
        String expected = c.verdict() == null || !c.verdict().startsWith("is ") || ip.isIpv4Mapped()
                ? null
                : c.verdict().substring(3);
        if (ip.isIpv4Mapped()) {
            // Go's To4 judges ::ffff:a.b.c.d as a.b.c.d.
            expected = IpAddress.parse(c.address().substring("::ffff:".length()))
                    .specialRange()
                    .map(SpecialRange::label)
                    .orElse(null);
        }
        assertThat(ip.specialRange().map(SpecialRange::label).orElse(null)).isEqualTo(expected);
    }

    private static Decoded decode(String yaml) throws ManifestException {
        List<ManifestDocument> docs = ManifestReader.parse("in.yaml", yaml);
        assertThat(docs).hasSize(1);
        return ManifestDecoder.decode(docs.get(0));
    }
}
