package io.rulesync.compiler.endpoints;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import java.util.List;
import java.util.Optional;

/**
 * What the rules of one node depend on about that node: its name (endpoint locality), its zone
 * (topology hints), its primary IP (load-balancer source ranges) and its IPs of the family (NodePort
 * addresses). Two nodes with equal contexts and settings get identical rules.
 */
public record NodeContext(String name, String zone, Optional<IpAddress> primaryIP, List<IpAddress> addresses) {

    public static NodeContext of(Node node, IpFamily family) {
        List<IpAddress> ips = node.addresses().stream()
                .map(Node.NodeAddress::address)
                .filter(ip -> ip.family() == family)
                .distinct()
                .toList();
        return new NodeContext(node.name(), node.zone(), node.primaryIP(family), ips);
    }
}
