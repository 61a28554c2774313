package io.rulesync.agent.ipvs;

import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Short spellings of virtual and real servers for the tests of this package. */
public final class IpvsFixtures {
    public static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    public static final Duration DRAIN = Duration.ofMinutes(15);

    private IpvsFixtures() {}

    public static IpAddress ip(String s) {
        return IpAddress.parse(s);
    }

    public static RealServer rs(String address, int port) {
        return new RealServer(ip(address), port, 1);
    }

    public static VirtualServer vs(
            String address, int port, Protocol protocol, String scheduler, int persistence, RealServer... reals) {
        return new VirtualServer(ip(address), port, protocol, scheduler, persistence, List.of(reals));
    }

    public static VirtualServer tcp(String address, int port, RealServer... reals) {
        return vs(address, port, Protocol.TCP, "rr", 0, reals);
    }

    public static ServiceId id(String address, int port, Protocol protocol) {
        return new ServiceId(ip(address), port, protocol);
    }

    public static List<String> lines(IpvsPlan plan) {
        return plan.commands().stream().map(IpvsCommand::line).toList();
    }
}
