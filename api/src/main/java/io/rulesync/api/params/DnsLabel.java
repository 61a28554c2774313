package io.rulesync.api.params;

import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.media.Schema;

/** A namespace or cluster id: a DNS-1123 label, as the API server (and the fleet file) require. */
@Schema(type = "string", description = "a DNS-1123 label")
public record DnsLabel(String name) {
    public static DnsLabel parse(String s) {
        String problem = KubernetesNames.checkNamespace(s);
        if (problem != null) {
            throw new BadValue(problem);
        }
        return new DnsLabel(s);
    }

    @Override
    public String toString() {
        return name;
    }
}
