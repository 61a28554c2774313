package io.rulesync.compiler.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Hashes taken from kube-proxy's own tests and real-world output. */
class ChainNamesTest {
    private static ServicePortName port(String ns, String name, String port, Protocol p) {
        return new ServicePortName(new NamespacedName(ns, name), port, p);
    }

    @ParameterizedTest
    @CsvSource({
        "ns1, svc1, p80, TCP, XPGD46QRK7WJZT7O",
        "ns2, svc2, p80, TCP, GNZBNJ2PO5MGZ6GT",
        "ns5, svc5, p80, TCP, NUKIZ6OKUXPJNT4C",
        "ns2, svc2, p8080, TCP, 2VJB64SDSIJUP5T6",
        "default, kubernetes, https, TCP, NPX46M4PTMTKRN6Y",
        "kube-system, kube-dns, dns, UDP, TCOU7JCQXEZGVUNU",
        "default, nginx, '', TCP, 2CMXP7HKUVJN7L6M",
    })
    void servicePortHashMatchesKubeProxy(String ns, String name, String portName, Protocol proto, String hash) {
        assertThat(ChainNames.portHash(port(ns, name, portName, proto))).isEqualTo(hash);
    }

    @ParameterizedTest
    @CsvSource({
        "ns1, svc1, 10.180.0.1:80, KUBE-SEP-SXIVWICOYRO3J4NJ",
        "ns1, svc1, 10.180.2.1:80, KUBE-SEP-ZX7GRIZKSNUQ3LAJ",
        "ns5, svc5, 10.180.0.3:80, KUBE-SEP-I77PXRDZVX7PMWMN",
        "ns4, svc4, 10.180.0.4:80, KUBE-SEP-UKSFD7AGPMPPLUHC",
        "ns1, svc1, 10.0.1.1:80, KUBE-SEP-SNQ3ZNILQDEJNDQO",
    })
    void endpointChainMatchesKubeProxy(String ns, String name, String endpoint, String chain) {
        assertThat(ChainNames.endpointChain(port(ns, name, "p80", Protocol.TCP), endpoint))
                .isEqualTo(chain);
    }

    @ParameterizedTest
    @CsvSource({
        "3, 0.3333333333",
        "2, 0.5000000000",
        "4, 0.2500000000",
        "7, 0.1428571429",
        "6, 0.1666666667",
        "1000, 0.0010000000",
        "1001, 0.0009990010",
        "100223, 0.0000099777",
        "30000, 0.0000333333"
    })
    void probabilityIsFormattedLikeGo(int n, String expected) {
        assertThat(ServicePortCompiler.probability(n).probability()).isEqualTo(expected);
    }
}
