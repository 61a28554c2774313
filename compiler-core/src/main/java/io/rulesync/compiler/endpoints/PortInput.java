package io.rulesync.compiler.endpoints;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What compiling one service port reads: the port as one family sees it, its endpoints, and the
 * Service's IPVS scheduler (null: the cluster's).
 */
public record PortInput(ServicePortInfo info, PortEndpoints endpoints, String ipvsScheduler) {

    public Unit unit() {
        return Unit.of(info.name());
    }

    /** The inputs of every port of a Service in one family; none when kube-proxy would skip it. */
    public static List<PortInput> of(Service svc, ClusterState state, IpFamily family) {
        List<ServicePortInfo> infos = ServicePortInfo.of(svc, family);
        if (infos.isEmpty()) {
            return List.of();
        }
        Map<ServicePortName, PortEndpoints> endpoints =
                EndpointCollector.collect(svc.name(), state.slicesOf(svc.name()), family);
        List<PortInput> out = new ArrayList<>(infos.size());
        for (ServicePortInfo info : infos) {
            out.add(new PortInput(info, endpoints.getOrDefault(info.name(), PortEndpoints.NONE), svc.ipvsScheduler()));
        }
        return out;
    }
}
