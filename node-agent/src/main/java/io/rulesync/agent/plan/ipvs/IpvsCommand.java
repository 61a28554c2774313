package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.util.List;

/**
 * One change to the kernel's IPVS table, rendered as the line {@code ipvsadm -R} (ipvsadm-restore)
 * takes: the arguments of one ipvsadm invocation. Real servers always masquerade ({@code -m}), as
 * kube-proxy's do: an edit without {@code -m} would switch them to direct routing, ipvsadm's default.
 */
public sealed interface IpvsCommand {

    /** The virtual server the command is about. */
    ServiceId service();

    /** Its ipvsadm-restore line, e.g. {@code -a -t 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1}. */
    String line();

    /** {@code -A}: a new virtual server, without real servers (they are added one by one). */
    record AddService(VirtualServer server) implements IpvsCommand {
        public AddService {
            server = bare(server);
        }

        @Override
        public ServiceId service() {
            return ServiceId.of(server);
        }

        @Override
        public String line() {
            return server.restoreLines().get(0);
        }
    }

    /** {@code -E}: scheduler, persistence or flags changed; unnamed options are reset, so it says them all. */
    record EditService(VirtualServer server) implements IpvsCommand {
        public EditService {
            server = bare(server);
        }

        @Override
        public ServiceId service() {
            return ServiceId.of(server);
        }

        @Override
        public String line() {
            return "-E" + server.restoreLines().get(0).substring(2);
        }
    }

    /** {@code -D}: the virtual server and its real servers go at once, as kube-proxy removes stale ones. */
    record DeleteService(ServiceId service) implements IpvsCommand {
        @Override
        public String line() {
            return "-D " + service.service();
        }
    }

    /** {@code -a}. */
    record AddReal(ServiceId service, RealServer real) implements IpvsCommand {
        @Override
        public String line() {
            return "-a " + service.service() + " -r " + real.text() + " -m -w " + real.weight();
        }
    }

    /** {@code -e}: a new weight (0 to drain, 1 to serve again). */
    record EditReal(ServiceId service, RealServer real) implements IpvsCommand {
        @Override
        public String line() {
            return "-e " + service.service() + " -r " + real.text() + " -m -w " + real.weight();
        }
    }

    /** {@code -d}. */
    record DeleteReal(ServiceId service, IpAddress address, int port) implements IpvsCommand {
        @Override
        public String line() {
            return "-d " + service.service() + " -r " + address.withPort(port);
        }
    }

    private static VirtualServer bare(VirtualServer vs) {
        return vs.realServers().isEmpty()
                ? vs
                : new VirtualServer(
                        vs.address(), vs.port(), vs.protocol(), vs.scheduler(), vs.persistenceSeconds(), List.of());
    }
}
