package io.rulesync.api.rollout;

import io.rulesync.model.cluster.KubernetesNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * The rollout policies a fleet file declares: a cluster's {@code rollout:} beside its {@code id} (the watcher reads the
 * rest of the file and leaves this key to the api). Read when the api starts; an operator's change through the api holds
 * until the api starts again with the file.
 */
public final class FleetPolicies {
    private FleetPolicies() {}

    /**
     * Each declaring cluster's policy, as JSON, by cluster id.
     *
     * @throws IllegalArgumentException naming the file, the cluster and the field at fault
     */
    public static Map<String, String> read(Path file) {
        Object doc;
        try {
            doc = new Load(LoadSettings.builder().build())
                    .loadFromString(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException | YamlEngineException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage());
        }
        Map<String, String> out = new TreeMap<>();
        if (!(doc instanceof Map<?, ?> top) || !(top.get("clusters") instanceof List<?> clusters)) {
            return out; // the watcher reads the file too, and says what is wrong with its shape
        }
        for (int i = 0; i < clusters.size(); i++) {
            if (!(clusters.get(i) instanceof Map<?, ?> c) || !c.containsKey("rollout")) {
                continue;
            }
            String id = String.valueOf(c.get("id"));
            String at = file.getFileName() + ": cluster " + KubernetesNames.printable(id) + ": rollout";
            if (!(c.get("rollout") instanceof Map<?, ?> policy)) {
                throw new IllegalArgumentException(at + ": expected an object with waves");
            }
            try {
                out.put(id, RolloutPolicy.from(policy).toJson());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(at + "." + e.getMessage());
            }
        }
        return out;
    }
}
