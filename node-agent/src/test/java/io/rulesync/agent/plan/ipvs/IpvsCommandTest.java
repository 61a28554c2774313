package io.rulesync.agent.plan.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.id;
import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static io.rulesync.agent.ipvs.IpvsFixtures.tcp;
import static io.rulesync.agent.ipvs.IpvsFixtures.vs;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import org.junit.jupiter.api.Test;

/** Each command renders the ipvsadm-restore line ipvsadm -R takes, in the model's conventions. */
class IpvsCommandTest {

    @Test
    void serviceCommands() {
        VirtualServer dns = tcp("10.96.0.10", 53, rs("10.244.1.5", 53));
        assertThat(new IpvsCommand.AddService(dns).line()).isEqualTo("-A -t 10.96.0.10:53 -s rr");
        assertThat(new IpvsCommand.AddService(dns).server().realServers()).isEmpty();
        assertThat(new IpvsCommand.EditService(vs("10.96.0.10", 53, Protocol.TCP, "rr", 10800)).line())
                .isEqualTo("-E -t 10.96.0.10:53 -s rr -p 10800");
        assertThat(new IpvsCommand.DeleteService(id("10.96.0.10", 53, Protocol.TCP)).line())
                .isEqualTo("-D -t 10.96.0.10:53");
        assertThat(new IpvsCommand.AddService(vs("10.96.0.10", 53, Protocol.UDP, "lc", 0)).line())
                .isEqualTo("-A -u 10.96.0.10:53 -s lc");
        assertThat(new IpvsCommand.AddService(vs("fd00:10:96::20", 3868, Protocol.SCTP, "mh", 600)).line())
                .isEqualTo("-A --sctp-service [fd00:10:96::20]:3868 -s mh -p 600 -b mh-port");
        assertThat(new IpvsCommand.EditService(vs("10.96.0.10", 80, Protocol.TCP, "mh", 0)).line())
                .isEqualTo("-E -t 10.96.0.10:80 -s mh -b mh-port");
    }

    @Test
    void realServerCommandsAlwaysMasquerade() {
        ServiceId dns = id("10.96.0.10", 53, Protocol.TCP);
        assertThat(new IpvsCommand.AddReal(dns, rs("10.244.1.5", 53)).line())
                .isEqualTo("-a -t 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1");
        assertThat(new IpvsCommand.EditReal(dns, new RealServer(ip("10.244.1.5"), 53, 0)).line())
                .isEqualTo("-e -t 10.96.0.10:53 -r 10.244.1.5:53 -m -w 0");
        assertThat(new IpvsCommand.DeleteReal(dns, ip("10.244.1.5"), 53).line())
                .isEqualTo("-d -t 10.96.0.10:53 -r 10.244.1.5:53");
        ServiceId v6 = id("fd00:10:96::20", 3868, Protocol.SCTP);
        assertThat(new IpvsCommand.AddReal(v6, rs("fd00:10:244::5", 3868)).line())
                .isEqualTo("-a --sctp-service [fd00:10:96::20]:3868 -r [fd00:10:244::5]:3868 -m -w 1");
        assertThat(new IpvsCommand.DeleteReal(id("10.96.0.10", 53, Protocol.UDP), ip("10.244.1.5"), 53).line())
                .isEqualTo("-d -u 10.96.0.10:53 -r 10.244.1.5:53");
    }

    @Test
    void addLinesAreTheModelsRestoreLines() {
        VirtualServer v = vs(
                "fd00:10:96::20",
                3868,
                Protocol.SCTP,
                "mh",
                600,
                rs("fd00:10:244::5", 3868),
                rs("fd00:10:244:1::5", 3868));
        ServiceId id = ServiceId.of(v);
        assertThat(id.key()).isEqualTo(v.key());
        assertThat(id.service()).isEqualTo(v.service());
        java.util.List<String> ours = new java.util.ArrayList<>();
        ours.add(new IpvsCommand.AddService(v).line());
        v.realServers().forEach(r -> ours.add(new IpvsCommand.AddReal(id, r).line()));
        assertThat(ours).isEqualTo(v.restoreLines());
    }
}
