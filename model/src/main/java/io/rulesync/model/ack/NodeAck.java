package io.rulesync.model.ack;

import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * What a node agent reports after each apply (like an xDS ACK/NACK): the version it now runs, or
 * the version it refused and why (it keeps running {@code running}).
 *
 * @param version    the version this ack is about (applied, or refused)
 * @param running    the version the node's kernel holds after this apply (= version when APPLIED)
 * @param error      null when APPLIED
 * @param durationMs time spent applying, validation included
 * @param ruleCount  rules the node holds for this version (both families)
 * @param mode       how rules are programmed, e.g. {@code iptables} or {@code dry-run}
 */
public record NodeAck(String cluster, String node, long version, long running, Status status, String error,
        long durationMs, int ruleCount, String mode, Instant at) {
    public static final int FORMAT = 1;

    public enum Status { APPLIED, FAILED }

    public NodeAck {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(at, "at");
        String bad = KubernetesNames.checkSubdomain(node);
        if (bad != null) {
            throw new IllegalArgumentException("node: " + bad);
        }
        if ((status == Status.FAILED) != (error != null)) {
            throw new IllegalArgumentException("error: a FAILED ack carries an error, an APPLIED one does not");
        }
        if (version < 0 || running < 0 || durationMs < 0 || ruleCount < 0) {
            throw new IllegalArgumentException("version, running, durationMs and ruleCount must not be negative");
        }
    }

    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", FORMAT);
        m.put("cluster", cluster);
        m.put("node", node);
        m.put("version", version);
        m.put("running", running);
        m.put("status", status.name());
        if (error != null) {
            m.put("error", error);
        }
        m.put("durationMs", durationMs);
        m.put("ruleCount", ruleCount);
        m.put("mode", mode);
        m.put("at", at.toString());
        return Json.write(m);
    }

    /** Reads {@link #toJson}; throws {@link IllegalArgumentException} naming the bad field. */
    public static NodeAck fromJson(String json) {
        Object parsed;
        try {
            parsed = new Load(LoadSettings.builder().setAllowDuplicateKeys(false).build()).loadFromString(json);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("ack is not JSON: " + e.getMessage(), e);
        }
        if (!(parsed instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("ack is not a JSON object");
        }
        if (!Integer.valueOf(FORMAT).equals(m.get("v"))) {
            throw new IllegalArgumentException("v: ack format " + m.get("v") + " is not supported");
        }
        Status status = switch (String.valueOf(m.get("status"))) {
            case "APPLIED" -> Status.APPLIED;
            case "FAILED" -> Status.FAILED;
            default -> throw new IllegalArgumentException("status: '" + m.get("status") + "' is not APPLIED or FAILED");
        };
        try {
            return new NodeAck((String) m.get("cluster"), (String) m.get("node"), ((Number) m.get("version")).longValue(),
                    ((Number) m.get("running")).longValue(), status, (String) m.get("error"),
                    ((Number) m.get("durationMs")).longValue(), ((Number) m.get("ruleCount")).intValue(), (String) m.get("mode"),
                    Instant.parse((String) m.get("at")));
        } catch (IllegalArgumentException e) {
            throw e; // the constructor's own message names the field
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("ack is missing a field or has one of the wrong type: " + e.getMessage(), e);
        }
    }
}
