package io.rulesync.compiler.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.iptables.GoldenCase;
import io.rulesync.compiler.ipvs.IpvsCompiler;
import io.rulesync.exec.CommandRunner;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.VirtualServer;
import io.rulesync.testing.needs.KernelFeature;
import io.rulesync.testing.needs.RequiresKernelFeature;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.netns.NetnsLab;
import io.rulesync.testsupport.vm.KernelVm;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * IPVS mode's renderings loaded into a real kernel, in a namespace of the test's own: the ipsets
 * with exactly the compiled members, the iptables rules and jumps, and real packets through the
 * KUBE-IPVS-FILTER guard. The virtual servers need IPVS in the kernel: that part runs where it
 * exists and says why it is skipped where not (this machine's kernel has none).
 */
@RequiresNetns
@RequiresTool("ipset")
class IpvsKernelTest {
    private static final boolean IPVS = KernelFeature.IPVS.present();
    private NetnsLab lab;
    private IpvsRules rules;
    private String loadable;

    @BeforeEach
    void lab() throws Exception {
        lab = new NetnsLab(0);
        GoldenCase c = GoldenCase.load(GoldenCase.ROOT.resolve("ipvs/shop"));
        rules = IpvsCompiler.compile(c.state(), c.node(), c.settings(), IpvsCompiler.DEFAULT_SCHEDULER);
        loadable = loadableIptables();
    }

    @AfterEach
    void close() {
        if (lab != null) {
            lab.close();
        }
    }

    /** The restore text this kernel can load: without the {@code -m ipvs} match when it has no IPVS. */
    private String loadableIptables() {
        if (IPVS) {
            return rules.iptablesRestore();
        }
        System.out.println("IpvsKernelTest: this kernel has no IPVS; the -m ipvs output filter rules are not loaded");
        return Arrays.stream(rules.iptablesRestore().split("\n"))
                .filter(l -> !l.contains("-m ipvs "))
                .collect(Collectors.joining("\n", "", "\n"));
    }

    private void load() {
        lab.execWithInput(lab.nodeNs(), rules.ipsetRestore(), "ipset", "restore")
                .orThrow();
        lab.execWithInput(lab.nodeNs(), loadable, "iptables-restore", "--noflush")
                .orThrow();
        for (IpvsRules.Jump j : IpvsRules.JUMPS) {
            List<String> argv = new java.util.ArrayList<>(List.of("iptables", "-t", j.table(), "-I", j.chain(), "1"));
            argv.addAll(shellWords(j.rule()));
            lab.exec(lab.nodeNs(), argv.toArray(String[]::new)).orThrow();
        }
    }

    /** Splits a rule into arguments, keeping a quoted comment whole. */
    private static List<String> shellWords(String rule) {
        List<String> out = new java.util.ArrayList<>();
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("\"([^\"]*)\"|(\\S+)").matcher(rule);
        while (m.find()) {
            out.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return out;
    }

    @Test
    void theSetsAndRulesLoadAsCompiled() {
        load();
        for (IpvsSet s : IpvsSet.values()) {
            List<String> members =
                    lab.exec(lab.nodeNs(), "ipset", "list", s.name(IpFamily.IPV4)).orThrow().lines().stream()
                            .dropWhile(l -> !l.equals("Members:"))
                            .skip(1)
                            .filter(l -> !l.isBlank())
                            .sorted()
                            .toList();
            assertThat(members)
                    .as(s.name(IpFamily.IPV4))
                    .isEqualTo(rules.sets().get(s).stream().sorted().toList());
        }
        for (String table : List.of("nat", "filter")) {
            List<String> chains = table.equals("nat") ? IpvsRules.NAT_CHAINS : IpvsRules.FILTER_CHAINS;
            for (String chain : chains) {
                long expected = Arrays.stream(loadable.split("\n"))
                        .filter(l -> l.startsWith("-A " + chain + " "))
                        .filter(l -> table.equals("nat") == rules.natRules().contains(l))
                        .count();
                long actual = lab.exec(lab.nodeNs(), "iptables", "-t", table, "-S", chain).orThrow().lines().stream()
                        .filter(l -> l.startsWith("-A "))
                        .count();
                assertThat(actual).as("%s %s", table, chain).isEqualTo(expected);
            }
        }
        // kube-proxy's successive inserts leave INPUT as: ipvs filter, proxy firewall, health-check node ports.
        assertThat(lab.exec(lab.nodeNs(), "iptables", "-S", "INPUT").orThrow().lines().stream()
                        .filter(l -> l.startsWith("-A "))
                        .map(l -> l.substring(l.lastIndexOf(' ') + 1))
                        .toList())
                .startsWith("KUBE-IPVS-FILTER", "KUBE-PROXY-FIREWALL", "KUBE-NODE-PORT");
    }

    @Test
    void onlyServicePortsOfABoundAddressAreReachable() {
        load();
        // The service addresses as kube-proxy binds them, and a server on the node answering every port.
        // kube-proxy binds them to the dummy device kube-ipvs0; where the kernel has no dummy driver (this
        // one), the loopback device makes them local addresses just the same.
        String device = lab.exec(lab.nodeNs(), "ip", "link", "add", "kube-ipvs0", "type", "dummy")
                        .ok()
                ? "kube-ipvs0"
                : "lo";
        for (var ip : rules.bound()) {
            lab.exec(lab.nodeNs(), "ip", "addr", "add", ip + "/32", "dev", device)
                    .orThrow();
        }
        lab.serveIn(lab.nodeNs(), "tcp", 80, "node80");
        lab.serveIn(lab.nodeNs(), "tcp", 81, "node81");
        // 10.96.0.80:80 is a service port: KUBE-IPVS-FILTER returns. Port 81 of the same address is not: rejected.
        assertThat(lab.probe(lab.nodeNs(), "tcp", "10.96.0.80", 80, 3, 2000)).allMatch(l -> l.startsWith("OK node80"));
        assertThat(lab.probe(lab.nodeNs(), "tcp", "10.96.0.80", 81, 3, 2000)).allMatch(l -> l.equals("REFUSED"));
    }

    @Test
    @RequiresKernelFeature(KernelFeature.IPVS)
    @RequiresTool("ipvsadm")
    void virtualServersLoadWhereTheKernelHasIpvs() {
        lab.execWithInput(lab.nodeNs(), rules.ipvsadmRestore(), "ipvsadm-restore")
                .orThrow();
        String saved = lab.exec(lab.nodeNs(), "ipvsadm", "-S", "-n").orThrow().stdout();
        for (VirtualServer vs : rules.virtualServers()) {
            assertThat(saved).contains("-A " + vs.service());
        }
    }

    /** The same, always: in a namespace of the kernel lab's VM, whose kernel has IPVS. */
    @Test
    @RequiresKernelVm
    void virtualServersLoadInTheKernelLab() {
        KernelVm vm = KernelVm.shared();
        try (KernelVm.Netns ns = vm.namespace("ipvs-compiled")) {
            CommandRunner.Result r =
                    ns.runner().run(List.of("ipvsadm", "-R"), rules.ipvsadmRestore(), Duration.ofSeconds(60));
            assertThat(r.ok()).as(r.stderr()).isTrue();
            String saved = vm.sh("ip netns exec " + ns.name() + " ipvsadm -S -n");
            for (VirtualServer vs : rules.virtualServers()) {
                assertThat(saved).contains("-A " + vs.service());
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
