package io.rulesync.compiler.kernel;

import static io.rulesync.compiler.kernel.KernelTestCluster.answers;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * iptables mode: the compiled rules loaded with iptables-restore (and ip6tables-restore) into a fresh network namespace
 * that plays node-a, with kube-proxy's jumps from the built-in chains. Nothing is mocked: the kernel's netfilter decides
 * every verdict ({@link ServiceKernelContract}). Beyond the contract: localhost NodePorts, and the source-range drop
 * counted by KUBE-PROXY-FIREWALL.
 */
@RequiresNetns
class CompiledRulesKernelTest extends ServiceKernelContract {

    @Override
    void load(NetnsLab lab, ClusterState state) throws Exception {
        ProxySettings settings =
                ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.244.0.0/16")));
        lab.restore(false, IptablesCompiler.compile(state, "node-a", settings).render());
        lab.installKubeProxyJumps(false);
        // The same objects' IPv6 rule set, as a dual-stack node loads it with ip6tables-restore.
        ProxySettings ipv6 = settings.withFamily(IpFamily.IPV6)
                .withClusterCidrs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse(lab.podCidrIPv6())));
        lab.restore(true, IptablesCompiler.compile(state, "node-a", ipv6).render());
        lab.installKubeProxyJumps(true);
    }

    @Test
    void localhostNodePortsAreServed() {
        // kube-proxy's default in iptables mode, with route_localnet.
        assertThat(answers(lab.probe(lab.nodeNs(), "tcp", "127.0.0.1", 30080, 10, TIMEOUT_MS))
                        .keySet())
                .isSubsetOf("pod0", "pod1", "pod2");
    }

    @Test
    void theSourceRangeDropIsKubeProxyFirewalls() {
        assertThat(lab.probe(lab.clientNs(), "tcp", "198.51.100.11", 80, 1, DROP_WAIT_MS))
                .containsOnly("TIMEOUT");
        String counters = lab.exec(
                        lab.nodeNs(), "iptables", "-t", "filter", "-L", "KUBE-PROXY-FIREWALL", "-v", "-n", "-x")
                .orThrow()
                .stdout();
        assertThat(counters.lines()
                        .filter(l -> l.contains("198.51.100.11"))
                        .findFirst()
                        .orElseThrow()
                        .strip())
                .matches("[1-9][0-9]* +[0-9]+ +DROP.*");
    }
}
