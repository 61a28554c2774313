package io.rulesync.model.cluster;

import java.util.Objects;

/**
 * An IP entry of {@code status.loadBalancer.ingress}. {@code proxyMode} is {@code ipMode: Proxy}: the
 * load balancer proxies the traffic itself, so kube-proxy writes no rule for that IP.
 */
public record LoadBalancerIngress(IpAddress ip, boolean proxyMode) {
    public LoadBalancerIngress {
        Objects.requireNonNull(ip, "ip");
    }
}
