package io.rulesync.agent.plan.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.DRAIN;
import static io.rulesync.agent.ipvs.IpvsFixtures.T0;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static io.rulesync.agent.ipvs.IpvsFixtures.tcp;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.ipvs.IpvsFixtures;
import io.rulesync.agent.ipvs.MemoryIpvs;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Draining state survives plans that see only part of the table: the other family, or Services a version did not change. */
class DrainingTest {

    @Test
    void aPlanOfOneFamilyDoesNotEndTheOtherFamilysDraining() throws Exception {
        MemoryIpvs kernel = new MemoryIpvs();
        kernel.run(IpvsPlan.plan(
                        IpFamily.IPV4,
                        List.of(tcp("10.96.0.10", 80, rs("10.244.1.5", 80), rs("10.244.1.6", 80))),
                        kernel.list(),
                        Draining.none(),
                        T0,
                        DRAIN)
                .commands());
        kernel.run(IpvsPlan.plan(
                        IpFamily.IPV6,
                        List.of(tcp("fd00::10", 80, rs("fd00::5", 80))),
                        kernel.list(),
                        Draining.none(),
                        T0,
                        DRAIN)
                .commands());
        kernel.setConnections(IpvsFixtures.id("10.96.0.10", 80, Protocol.TCP), IpvsFixtures.ip("10.244.1.6"), 80, 3, 0);

        // IPv4 loses an endpoint with a connection: it drains until T0 + 15 min.
        IpvsPlan v4 = IpvsPlan.plan(
                IpFamily.IPV4,
                List.of(tcp("10.96.0.10", 80, rs("10.244.1.5", 80))),
                kernel.list(),
                Draining.none(),
                T0,
                DRAIN);
        kernel.run(v4.commands());
        Draining d = Draining.none().after(v4.draining(), id -> id.address().family() == IpFamily.IPV4);
        assertThat(d.size()).isEqualTo(1);

        // The IPv6 plan that follows knows nothing of IPv4: its own draining state is empty, the IPv4 entry stays.
        IpvsPlan v6 = IpvsPlan.plan(
                IpFamily.IPV6,
                List.of(tcp("fd00::10", 80, rs("fd00::5", 80))),
                kernel.list(),
                d,
                T0.plusSeconds(60),
                DRAIN);
        assertThat(v6.draining().isEmpty()).isTrue();
        Draining after = d.after(v6.draining(), id -> id.address().family() == IpFamily.IPV6);
        assertThat(after).isEqualTo(d);
        assertThat(after.deadlines().values()).containsExactly(T0.plus(DRAIN));

        // A plan of only the Services a version changed keeps the others' entries too.
        assertThat(after.after(Draining.none(), id -> id.port() == 443)).isEqualTo(d);
        assertThat(after.after(Draining.none(), id -> id.port() == 80)).isEqualTo(Draining.none());
    }
}
