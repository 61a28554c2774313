package io.rulesync.compiler.endpoints;

import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.ServicePortName;
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
 * dropped, duplicates ({@code ip:port}) collapse (see {@link PortEndpoints} for which copy wins), and
 * each list is sorted by the {@code ip:port} string.
 */
public final class EndpointCollector {
    private static final Comparator<EndpointInfo> BY_TEXT = Comparator.comparing(EndpointInfo::text);

    private EndpointCollector() {}

    public static Map<ServicePortName, PortEndpoints> collect(
            NamespacedName service, List<EndpointSlice> slices, IpFamily family) {
        Map<ServicePortName, Map<String, List<EndpointInfo>>> byPort = new LinkedHashMap<>();
        for (EndpointSlice slice : slices) {
            if (slice.ignored()) {
                continue;
            }
            for (EndpointPort port : slice.ports()) {
                if (port.port() == 0) {
                    continue;
                }
                ServicePortName spn = new ServicePortName(service, port.name(), port.protocol());
                Map<String, List<EndpointInfo>> copies = byPort.computeIfAbsent(spn, k -> new HashMap<>());
                for (Endpoint ep : slice.endpoints()) {
                    if (ep.address().family() != family) {
                        continue;
                    }
                    String text = EndpointInfo.joinHostPort(ep.address(), port.port());
                    copies.computeIfAbsent(text, k -> new ArrayList<>(1))
                            .add(new EndpointInfo(
                                    ep.address(),
                                    port.port(),
                                    text,
                                    ep.ready(),
                                    ep.serving(),
                                    ep.terminating(),
                                    ep.nodeName(),
                                    ep.zoneHints(),
                                    ep.nodeHints()));
                }
            }
        }
        Map<ServicePortName, PortEndpoints> out = new HashMap<>();
        for (Map.Entry<ServicePortName, Map<String, List<EndpointInfo>>> e : byPort.entrySet()) {
            List<EndpointInfo> first = new ArrayList<>(e.getValue().size());
            Map<String, List<EndpointInfo>> duplicates = new HashMap<>();
            for (List<EndpointInfo> copies : e.getValue().values()) {
                first.add(copies.get(0));
                if (copies.stream().map(EndpointInfo::nodeName).distinct().count() > 1) {
                    duplicates.put(copies.get(0).text(), List.copyOf(copies));
                }
            }
            first.sort(BY_TEXT);
            out.put(e.getKey(), new PortEndpoints(first, duplicates));
        }
        return out;
    }
}
