package io.rulesync.api.params;

import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.media.Schema;

/** A node or object name: a DNS-1123 subdomain, as the API server requires. */
@Schema(type = "string", description = "a DNS-1123 subdomain")
public record DnsSubdomain(String name) {
    public static DnsSubdomain parse(String s) {
        String problem = KubernetesNames.checkSubdomain(s);
        if (problem != null) {
            throw new BadValue(problem);
        }
        return new DnsSubdomain(s);
    }

    @Override
    public String toString() {
        return name;
    }
}
