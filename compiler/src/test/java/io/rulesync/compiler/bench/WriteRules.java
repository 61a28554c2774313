package io.rulesync.compiler.bench;

import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.NodeRules;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes the synthetic cluster's rules to a file and prints their size, for the iptables-restore
 * measurement in BENCHMARKS.md: {@code WriteRules SERVICES ENDPOINTS FILE}.
 */
public final class WriteRules {
    private WriteRules() {}

    public static void main(String[] args) throws Exception {
        int services = Integer.parseInt(args[0]);
        int endpoints = Integer.parseInt(args[1]);
        ProxySettings settings =
                ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.64.0.0/10")));
        NodeRules rules =
                IptablesCompiler.compile(SyntheticCluster.build(services, endpoints), SyntheticCluster.NODE, settings);
        String text = rules.render();
        Files.writeString(Path.of(args[2]), text, StandardCharsets.UTF_8);
        long lines = text.lines().count();
        System.out.printf(
                "services=%d endpoints/service=%d bytes=%d lines=%d rules=%d chains=%d largeClusterMode=%s%n",
                services,
                endpoints,
                text.getBytes(StandardCharsets.UTF_8).length,
                lines,
                rules.ruleSet().ruleCount(),
                rules.ruleSet().filter().size() + rules.ruleSet().nat().size(),
                rules.largeClusterMode());
    }
}
