package io.rulesync.compiler.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Proves that {@link NetnsLab} carries real packets through hand-written kube-proxy-style rules, and that it
 * leaves no namespace behind.
 */
@RequiresNetns
class NetnsLabSmokeTest {

    @Test
    void serviceDnatRejectAndRoutingWorkAndNoNamespaceLeaks() {
        List<String> labNamespaces;
        long t0 = System.nanoTime();
        try (NetnsLab lab = new NetnsLab(2)) {
            System.out.printf("lab created in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
            labNamespaces = lab.namespaces();
            assertThat(NetnsLab.listNamespaces()).containsAll(labNamespaces);

            lab.serve(0, "tcp", 8080, "pod0");
            lab.serve(0, "udp", 8080, "pod0");
            lab.serve(1, "tcp", 8080, "pod1");
            lab.serve(1, "udp", 8080, "pod1");

            lab.restore(
                    false,
                    String.join(
                            "\n",
                            "*nat",
                            ":KUBE-SERVICES - [0:0]",
                            ":KUBE-SVC-SMOKE - [0:0]",
                            "-A KUBE-SERVICES -d 10.96.0.1/32 -j KUBE-SVC-SMOKE",
                            "-A KUBE-SVC-SMOKE -p tcp -m tcp --dport 80 -j DNAT --to-destination " + lab.podIPv4(0)
                                    + ":8080",
                            "-A KUBE-SVC-SMOKE -p udp -m udp --dport 53 -j DNAT --to-destination " + lab.podIPv4(1)
                                    + ":8080",
                            "COMMIT",
                            "*filter",
                            ":KUBE-SERVICES - [0:0]",
                            "-A KUBE-SERVICES -d 10.96.0.2/32 -p tcp -m tcp --dport 80 -j REJECT",
                            "-A KUBE-SERVICES -d 10.96.0.2/32 -p udp -m udp --dport 53 -j REJECT",
                            "COMMIT"));
            lab.installKubeProxyJumps(false);

            long p0 = System.nanoTime();
            List<String> tcp = lab.probe(lab.nodeNs(), "tcp", "10.96.0.1", 80, 10, 2000);
            System.out.printf("10 TCP connections probed in %d ms%n", (System.nanoTime() - p0) / 1_000_000);
            assertThat(tcp).hasSize(10).allSatisfy(l -> assertThat(l).startsWith("OK pod0 "));

            assertThat(lab.probe(lab.nodeNs(), "udp", "10.96.0.1", 53, 3, 2000))
                    .allSatisfy(l -> assertThat(l).startsWith("OK pod1 "));

            // outside client -> pod 1 directly, routed by the node; no NAT, so the pod sees the client's IP
            assertThat(lab.probe(lab.clientNs(), "tcp", lab.podIPv4(1), 8080, 3, 2000))
                    .containsOnly("OK pod1 " + lab.clientIPv4());

            long r0 = System.nanoTime();
            assertThat(lab.probe(lab.nodeNs(), "tcp", "10.96.0.2", 80, 3, 3000)).containsOnly("REFUSED");
            long rejectMs = (System.nanoTime() - r0) / 1_000_000;
            System.out.printf("3 rejected TCP connections in %d ms%n", rejectMs);
            assertThat(rejectMs).as("REJECT must answer at once, not time out").isLessThan(2500);

            assertThat(lab.probe(lab.nodeNs(), "udp", "10.96.0.2", 53, 3, 3000)).containsOnly("REFUSED");
        }
        assertThat(NetnsLab.listNamespaces()).doesNotContainAnyElementsOf(labNamespaces);
        assertThat(ipNetnsList()).doesNotContainAnyElementsOf(labNamespaces);
    }

    @Test
    void ipv6ServiceHairpinPodToServiceAndKernelQuirks() {
        try (NetnsLab lab = new NetnsLab(2)) {
            lab.serve(0, "tcp", 8080, "pod0");
            lab.serve(1, "tcp", 8080, "pod1");
            lab.restore(
                    false,
                    String.join(
                            "\n",
                            "*nat",
                            ":KUBE-SERVICES - [0:0]",
                            ":KUBE-POSTROUTING - [0:0]",
                            "-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination "
                                    + lab.podIPv4(0) + ":8080",
                            // hairpin: pod 0 reaching itself through the Service must be masqueraded
                            "-A KUBE-POSTROUTING -s " + lab.podIPv4(0) + "/32 -d " + lab.podIPv4(0)
                                    + "/32 -j MASQUERADE",
                            "COMMIT"));
            lab.restore(
                    true,
                    String.join(
                            "\n",
                            "*nat",
                            ":KUBE-SERVICES - [0:0]",
                            ":KUBE-POSTROUTING - [0:0]",
                            "-A KUBE-SERVICES -d fd00:96::1/128 -p tcp -m tcp --dport 80 -j DNAT --to-destination ["
                                    + lab.podIPv6(1) + "]:8080",
                            "COMMIT",
                            "*filter",
                            ":KUBE-SERVICES - [0:0]",
                            "-A KUBE-SERVICES -d fd00:96::2/128 -p tcp -m tcp --dport 80 -j REJECT",
                            "-A KUBE-SERVICES -d fd00:96::3/128 -p udp -m udp --dport 53 -j DROP",
                            "COMMIT"));
            lab.installKubeProxyJumps(false);
            lab.installKubeProxyJumps(true);

            // IPv6 Service from the outside client (PREROUTING) and from the node (OUTPUT)
            assertThat(lab.probe(lab.clientNs(), "tcp", "fd00:96::1", 80, 3, 2000))
                    .containsOnly("OK pod1 " + lab.clientIPv6());
            assertThat(lab.probe(lab.nodeNs(), "tcp", "fd00:96::1", 80, 3, 2000))
                    .allSatisfy(l -> assertThat(l).startsWith("OK pod1 "));
            // pod 1 -> Service -> pod 0 across the bridge (replies are bridged and un-DNATed via br_netfilter)
            assertThat(lab.probe(lab.podNs(1), "tcp", "10.96.0.1", 80, 3, 2000))
                    .containsOnly("OK pod0 " + lab.podIPv4(1));
            // pod 0 -> Service -> pod 0 itself: needs hairpin mode on the bridge port plus the masquerade
            assertThat(lab.probe(lab.podNs(0), "tcp", "10.96.0.1", 80, 3, 2000))
                    .containsOnly("OK pod0 " + lab.bridgeIPv4());
            // IPv6 pod to pod directly, and a port nothing listens on
            assertThat(lab.probe(lab.podNs(0), "tcp", lab.podIPv6(1), 8080, 1, 2000))
                    .containsOnly("OK pod1 " + lab.podIPv6(0));
            assertThat(lab.probe(lab.podNs(0), "udp", lab.podIPv6(1), 9999, 1, 2000))
                    .containsOnly("REFUSED");
            // Kernel quirk: the ICMPv6 error of an IPv6 TCP REJECT reaches the socket while connect() still holds
            // its lock and is dropped (TcpExtLockDroppedIcmps); the SYN retransmission ~1 s later is refused.
            assertThat(lab.probe(lab.podNs(0), "tcp", "fd00:96::2", 80, 1, 3000))
                    .containsOnly("REFUSED");
            // A DROP on the node's own output path fails a UDP send with EPERM at once (no ICMP: not a REJECT).
            assertThat(lab.probe(lab.nodeNs(), "udp", "fd00:96::3", 53, 1, 1000))
                    .singleElement()
                    .asString()
                    .startsWith("ERROR EPERM");
        }
    }

    @Test
    void jumpsFollowKubeProxyOrderAndAreIdempotent() {
        try (NetnsLab lab = new NetnsLab(0)) {
            lab.installKubeProxyJumps(false);
            lab.installKubeProxyJumps(false);
            lab.installKubeProxyJumps(true);
            assertThat(chain(lab, false, "filter", "FORWARD"))
                    .containsExactly(
                            "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL",
                            "-A FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD",
                            "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES",
                            "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES");
            assertThat(chain(lab, false, "filter", "INPUT"))
                    .containsExactly(
                            "-A INPUT -j KUBE-FIREWALL",
                            "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL",
                            "-A INPUT -m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS",
                            "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES");
            assertThat(chain(lab, false, "filter", "OUTPUT"))
                    .containsExactly(
                            "-A OUTPUT -j KUBE-FIREWALL",
                            "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL",
                            "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES");
            assertThat(chain(lab, false, "nat", "PREROUTING"))
                    .containsExactly(
                            "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES");
            assertThat(chain(lab, false, "nat", "OUTPUT"))
                    .containsExactly("-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES");
            assertThat(chain(lab, false, "nat", "POSTROUTING"))
                    .containsExactly(
                            "-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING");
            assertThat(chain(lab, true, "filter", "INPUT")).noneMatch(l -> l.contains("KUBE-FIREWALL"));
            assertThat(chain(lab, true, "filter", "INPUT")).hasSize(3);
            assertThat(lab.save(true)).doesNotContain("KUBE-FIREWALL ");
        }
    }

    private static List<String> chain(NetnsLab lab, boolean ipv6, String table, String chain) {
        return lab
                .exec(lab.nodeNs(), ipv6 ? "ip6tables" : "iptables", "-t", table, "-S", chain)
                .orThrow()
                .lines()
                .stream()
                .filter(l -> l.startsWith("-A "))
                .toList();
    }

    /** Cross-check of {@link NetnsLab#listNamespaces()} with {@code ip netns list} itself. */
    private static List<String> ipNetnsList() {
        try {
            Process p = new ProcessBuilder("ip", "netns", "list")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            return out.lines().map(l -> l.split(" ")[0]).toList();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
