package io.rulesync.agent.conntrack;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Real UDP flows through a namespaced node: after an endpoint goes, its conntrack entries go, the others stay. */
@RequiresNetns
@RequiresTool("conntrack")
class ConntrackKernelTest {

    @Test
    void flowsToARemovedEndpointAreDeleted() throws Exception {
        try (NetnsLab lab = new NetnsLab(2);
                AgentLogs log = new AgentLogs()) {
            lab.serve(0, "udp", 5353, "pod0");
            lab.serve(1, "udp", 5353, "pod1");
            IptablesNetfilter nf = new IptablesNetfilter(
                    IpFamily.IPV4, HostCommand.PROCESSES.inNetns(lab.nodeNs()), IptablesNetfilter.Printer.KERNEL_FORM);
            RuleSet both = StaleFlowsTest.dnsRules(lab.podIPv4(0), lab.podIPv4(1));
            assertThat(new Applier(List.of(nf))
                            .apply(null, Map.of(IpFamily.IPV4, both))
                            .error())
                    .isNull();
            List<String> answers = lab.probe(lab.clientNs(), "udp", "10.96.0.53", 53, 30, 2000);
            assertThat(answers).anyMatch(l -> l.startsWith("OK pod0")).anyMatch(l -> l.startsWith("OK pod1"));
            assertThat(flows(lab))
                    .anyMatch(l -> l.contains("src=" + lab.podIPv4(1) + " "))
                    .anyMatch(l -> l.contains("src=" + lab.podIPv4(0) + " "));

            new Conntrack(HostCommand.PROCESSES.inNetns(lab.nodeNs()), false)
                    .flush(
                            IpFamily.IPV4,
                            StaleFlows.between(
                                    IpFamily.IPV4,
                                    StaleFlowsTest.DNS,
                                    StaleFlowsTest.dns(lab.podIPv4(0), lab.podIPv4(1)),
                                    StaleFlowsTest.dns(lab.podIPv4(0))));
            assertThat(flows(lab))
                    .noneMatch(l -> l.contains("src=" + lab.podIPv4(1) + " "))
                    .anyMatch(l -> l.contains("src=" + lab.podIPv4(0) + " "));
            assertThat(log.lines()).isEmpty();
        }
    }

    /** The node's UDP conntrack entries to the Service IP. */
    private static List<String> flows(NetnsLab lab) {
        return lab.exec(lab.nodeNs(), "conntrack", "-L", "-p", "udp", "--orig-dst", "10.96.0.53")
                .stdout()
                .lines()
                .toList();
    }
}
