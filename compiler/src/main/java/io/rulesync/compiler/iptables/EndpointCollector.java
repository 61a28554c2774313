package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.cluster.NamespacedName;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Merges the EndpointSlices of one Service into per-port endpoint lists, as kube-proxy's
 * EndpointSliceCache does: slice ports match service ports by name and protocol, ports without a
 * number are ignored, only an endpoint's first address counts, addresses of the other family are
 * dropped, duplicates ({@code ip:port}) collapse (a local copy wins), and each list is sorted by the
 * {@code ip:port} string.
 */
final class EndpointCollector {
    private static final Comparator<EndpointInfo> BY_TEXT = Comparator.comparing(EndpointInfo::text);

    private EndpointCollector() {
    }

    static Map<ServicePortName, List<EndpointInfo>> collect(
            NamespacedName service, List<EndpointSlice> slices, IpFamily family, String nodeName) {
        Map<ServicePortName, Map<String, EndpointInfo>> byPort = new LinkedHashMap<>();
        for (EndpointSlice slice : slices) {
            if (slice.ignored()) {
                continue;
            }
            for (EndpointPort port : slice.ports()) {
                if (port.port() == 0) {
                    continue;
                }
                ServicePortName spn = new ServicePortName(service, port.name(), port.protocol());
                Map<String, EndpointInfo> set = byPort.computeIfAbsent(spn, k -> new HashMap<>());
                for (Endpoint ep : slice.endpoints()) {
                    if (ep.address().family() != family) {
                        continue;
                    }
                    boolean local = !nodeName.isEmpty() && nodeName.equals(ep.nodeName());
                    String text = EndpointInfo.joinHostPort(ep.address(), port.port());
                    if (!set.containsKey(text) || local) {
                        set.put(text, new EndpointInfo(ep.address(), port.port(), text, ep.ready(), ep.serving(),
                                ep.terminating(), local, ep.zoneHints(), ep.nodeHints()));
                    }
                }
            }
        }
        Map<ServicePortName, List<EndpointInfo>> out = new HashMap<>();
        for (Map.Entry<ServicePortName, Map<String, EndpointInfo>> e : byPort.entrySet()) {
            List<EndpointInfo> list = new ArrayList<>(e.getValue().values());
            list.sort(BY_TEXT);
            out.put(e.getKey(), list);
        }
        return out;
    }
}
