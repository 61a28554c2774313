package io.rulesync.agent.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.id;
import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.plan.ipvs.Draining;
import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code ipvsadm -Ln --exact} output read back. The samples follow ipvsadm 1.31's printf formats
 * (its binary's format strings: the service as {@code "%-4s %s"} then {@code " %s"} scheduler,
 * {@code " (%s)"} scheduler flags, {@code " persistent %u"}, {@code " mask %i"}, {@code " ops"},
 * {@code " pe %s"}; a real server as {@code "  -> %-28s %-7s %-6d %-10u %-10u"}, with a
 * {@code %-13s} tunnel column before the weight when a real server tunnels).
 */
class IpvsadmListingTest {

    /** Written as the kernel on a kube-proxy node would list it; trailing blanks are gone (text block). */
    static final String LISTING = """
            IP Virtual Server version 1.2.1 (size=4096)
            Prot LocalAddress:Port Scheduler Flags
              -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
            TCP  10.96.0.1:443 rr
              -> 192.168.50.1:6443            Masq    1      3          1
            TCP  10.96.0.10:53 rr persistent 10800
              -> 10.244.1.5:53                Masq    1      0          0
              -> 10.244.2.7:53                Masq    0      2          5
            UDP  10.96.0.10:53 rr
              -> 10.244.1.5:53                Masq    1      0          0
            SCTP 10.96.0.20:3868 mh (mh-port) persistent 600
              -> 10.244.1.6:3868              Masq    1      0          0
            TCP  192.168.50.1:30080 wlc
            FWM  7 rr
              -> 10.0.0.9:0                   Route   1      0          0
            TCP  [fd00:10:96::20]:3868 mh (mh-fallback,mh-port) persistent 600 mask 64
              -> [fd00:10:244::5]:3868        Masq    1      12         40
            UDP  [2001:db8::53]:53 rr ops
            """;

    @Test
    void readsServicesRealServersAndCounts() {
        List<KernelVirtualServer> l = IpvsadmKernel.parseListing(LISTING);
        assertThat(l)
                .extracting(k -> k.service().key())
                .containsExactly(
                        "10.96.0.1:443/TCP",
                        "10.96.0.10:53/TCP",
                        "10.96.0.10:53/UDP",
                        "10.96.0.20:3868/SCTP",
                        "192.168.50.1:30080/TCP",
                        // In order of service, whatever the kernel's (hash) order of listing.
                        "[2001:db8::53]:53/UDP",
                        "[fd00:10:96::20]:3868/TCP");
        KernelVirtualServer dns = l.get(1);
        assertThat(dns.scheduler()).isEqualTo("rr");
        assertThat(dns.persistenceSeconds()).isEqualTo(10800);
        assertThat(dns.flags()).isEmpty();
        assertThat(dns.realServers())
                .containsExactly(
                        new KernelRealServer(ip("10.244.1.5"), 53, "Masq", 1, 0, 0),
                        new KernelRealServer(ip("10.244.2.7"), 53, "Masq", 0, 2, 5));
        assertThat(l.get(0).realServers())
                .singleElement()
                .satisfies(r -> assertThat(r.connections()).isEqualTo(4));
        assertThat(l.get(3).flags()).containsExactly("mh-port");
        assertThat(l.get(3).service().protocol()).isEqualTo(Protocol.SCTP);
        assertThat(l.get(4).realServers()).isEmpty();
        KernelVirtualServer v6 = l.get(6);
        assertThat(v6.service()).isEqualTo(id("fd00:10:96::20", 3868, Protocol.TCP));
        assertThat(v6.flags()).containsExactly("mask=64", "mh-fallback", "mh-port");
        assertThat(v6.persistenceSeconds()).isEqualTo(600);
        assertThat(v6.realServers())
                .containsExactly(new KernelRealServer(ip("fd00:10:244::5"), 3868, "Masq", 1, 12, 40));
        assertThat(l.get(5).flags()).containsExactly("ops");
    }

    @Test
    void columnsAsIpvsadmPadsThem() {
        // Rendered with ipvsadm's own formats, trailing blanks included.
        String text = "IP Virtual Server version 1.2.1 (size=4096)\n"
                + "Prot LocalAddress:Port Scheduler Flags\n"
                + "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n"
                + String.format("%-4s %s", "TCP", "10.96.0.10:80") + " rr\n"
                + String.format("  -> %-28s %-7s %-6d %-10d %-10d%n", "10.244.1.5:8080", "Masq", 1, 7, 123456789)
                + String.format("%-4s %s", "SCTP", "[fd00::1]:80") + " mh (mh-port)\n"
                + String.format(
                        "  -> %-28s %-7s %-6d %-10d %-10d%n",
                        "[fd00:10:244:ffff:ffff:ffff:ffff:ffff]:65535", "Masq", 65535, 0, 0);
        List<KernelVirtualServer> l = IpvsadmKernel.parseListing(text);
        assertThat(l.get(0).realServers())
                .containsExactly(new KernelRealServer(ip("10.244.1.5"), 8080, "Masq", 1, 7, 123456789));
        assertThat(l.get(1).realServers())
                .containsExactly(
                        new KernelRealServer(ip("fd00:10:244:ffff:ffff:ffff:ffff:ffff"), 65535, "Masq", 65535, 0, 0));
    }

    @Test
    void aTunnelColumnIsSkipped() {
        String text = """
                IP Virtual Server version 1.2.1 (size=4096)
                Prot LocalAddress:Port Scheduler Flags
                  -> RemoteAddress:Port           Forward TunnelInfo    Weight ActiveConn InActConn
                TCP  10.96.0.10:80 wrr
                  -> 10.244.1.5:80                Tunnel  gue:6080      3      1          2
                  -> 10.244.1.6:80                Masq                  1      0          0
                """;
        assertThat(IpvsadmKernel.parseListing(text).get(0).realServers())
                .containsExactly(
                        new KernelRealServer(ip("10.244.1.5"), 80, "Tunnel", 3, 1, 2),
                        new KernelRealServer(ip("10.244.1.6"), 80, "Masq", 1, 0, 0));
    }

    @Test
    void anEmptyTableHasNoServers() {
        assertThat(IpvsadmKernel.parseListing("""
                IP Virtual Server version 1.2.1 (size=4096)
                Prot LocalAddress:Port Scheduler Flags
                  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
                """)).isEmpty();
    }

    @Test
    void unreadableLinesAreQuoted() {
        assertThatThrownBy(() -> IpvsadmKernel.parseListing("ICMP 10.0.0.1:80 rr\n"))
                .hasMessageContaining("'ICMP 10.0.0.1:80 rr'");
        assertThatThrownBy(() -> IpvsadmKernel.parseListing("  -> 10.0.0.1:80 Masq 1 0 0\n"))
                .hasMessageContaining("unexpected real server");
        assertThatThrownBy(() -> IpvsadmKernel.parseListing("TCP  10.0.0.1:80 rr persistent x\n"))
                .hasMessageContaining("'x' is not a number");
    }

    @Test
    void theListingMatchesWhatItWasPlannedFrom() {
        VirtualServer desired = IpvsFixtures.vs("10.96.0.20", 3868, Protocol.SCTP, "mh", 600, rs("10.244.1.6", 3868));
        KernelVirtualServer listed = IpvsadmKernel.parseListing(LISTING).get(3);
        assertThat(listed.sameSettings(desired)).isTrue();
        assertThat(IpvsPlan.plan(
                                io.rulesync.model.cluster.IpFamily.IPV4,
                                List.of(desired),
                                List.of(listed),
                                Draining.none(),
                                IpvsFixtures.T0,
                                IpvsFixtures.DRAIN)
                        .commands())
                .isEmpty();
    }

    @Test
    void commandsWhoseEffectIsMissingAreFound() {
        List<KernelVirtualServer> l = IpvsadmKernel.parseListing(LISTING);
        ServiceId dns = id("10.96.0.10", 53, Protocol.TCP);
        List<IpvsCommand> done = List.of(
                new IpvsCommand.EditService(IpvsFixtures.vs("10.96.0.10", 53, Protocol.TCP, "rr", 10800)),
                new IpvsCommand.EditReal(dns, new RealServer(ip("10.244.2.7"), 53, 0)),
                new IpvsCommand.DeleteReal(dns, ip("10.244.9.9"), 53),
                new IpvsCommand.DeleteService(id("10.96.0.99", 53, Protocol.TCP)));
        List<IpvsCommand> notDone = List.of(
                new IpvsCommand.AddService(IpvsFixtures.vs("10.96.0.10", 53, Protocol.TCP, "wrr", 10800)),
                new IpvsCommand.AddReal(dns, rs("10.244.2.7", 53)),
                new IpvsCommand.DeleteReal(dns, ip("10.244.1.5"), 53),
                new IpvsCommand.DeleteService(id("10.96.0.1", 443, Protocol.TCP)));
        List<IpvsCommand> all = new java.util.ArrayList<>(done);
        all.addAll(notDone);
        assertThat(IpvsadmKernel.notInEffect(all, l)).containsExactlyElementsOf(notDone);
    }

    /**
     * On a node with kmod but no module directory, ipvsadm's modprobe complains before ipvsadm says why; operators are told
     * ipvsadm's reason, in a listing and in a restore alike.
     */
    @Test
    void aFailureIsToldByIpvsadmsReasonNotModprobesNoise() {
        String err = """
                modprobe: FATAL: Module ip_vs not found in directory /lib/modules/6.18.44-fc-v1252
                Can't initialize ipvs: Protocol not available
                Are you sure that IP Virtual Server is built in the kernel or as module?
                """;
        IpvsadmKernel kernel =
                new IpvsadmKernel((argv, stdin, timeout) -> new io.rulesync.exec.CommandRunner.Result(2, "", err));
        assertThatThrownBy(kernel::list)
                .isInstanceOf(IpvsApplyException.class)
                .hasMessage("ipvsadm -Ln failed: Can't initialize ipvs: Protocol not available");
        assertThatThrownBy(() -> kernel.list(List.of(id("10.96.0.10", 53, Protocol.TCP))))
                .isInstanceOf(IpvsApplyException.class)
                .hasMessage("ipvsadm -Ln -t 10.96.0.10:53 failed: Can't initialize ipvs: Protocol not available");
        assertThatThrownBy(() -> kernel.run(List.of(new IpvsCommand.DeleteService(id("10.96.0.10", 53, Protocol.TCP)))))
                .isInstanceOf(IpvsApplyException.class)
                .hasMessage(
                        "ipvsadm -R failed (Can't initialize ipvs: Protocol not available) and the table cannot be listed: "
                                + "ipvsadm -Ln failed: Can't initialize ipvs: Protocol not available");
    }
}
