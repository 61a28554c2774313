package io.rulesync.watcher.fleet;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.manifest.Problem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * Reads and validates a fleet file:
 *
 * <pre>
 * clusters:
 *   - id: prod-eu                  # DNS-1123 label, becomes the Kafka key
 *     kubeconfig: ~/.kube/config   # optional; default: fabric8's auto-configuration
 *     context: prod-eu             # optional
 *     settings: {families: [ipv4, ipv6], clusterCIDRs: [10.244.0.0/16], masqueradeAll: false,
 *                masqueradeBit: 14, nodePortAddresses: [], ipvsScheduler: rr}
 *   - id: in-cluster
 *     inCluster: true
 *   - id: demo-a
 *     manifests: examples/fleet/demo-a   # relative to the fleet file's folder
 * </pre>
 *
 * Every problem is reported (not just the first), each naming the file, the cluster and the field,
 * e.g. {@code fleet.yaml: cluster prod-eu: settings.masqueradeBit: 40 is out of range (0-31)}.
 * Unknown fields are errors: a misspelt {@code masqueradeAll} must not silently become the default.
 */
public final class FleetFile {
    private static final Set<String> TOP_FIELDS = Set.of("clusters");
    /** {@code rollout} is the api's (its staged rollout policy, read with {@code api --fleet}); the watcher leaves it alone. */
    private static final Set<String> CLUSTER_FIELDS =
            Set.of("id", "kubeconfig", "context", "inCluster", "manifests", "settings", "rollout");

    private static final Set<String> SETTINGS_FIELDS =
            Set.of("families", "clusterCIDRs", "masqueradeAll", "masqueradeBit", "nodePortAddresses", "ipvsScheduler");

    private FleetFile() {}

    /** Reads the fleet file at {@code file}; relative paths in it are resolved against its folder. */
    public static FleetConfig load(Path file) throws FleetException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FleetException(List.of(new Problem(file.toString(), "", "", "cannot read: " + e.getMessage())));
        }
        Path base = file.toAbsolutePath().getParent();
        List<ClusterSpec> clusters = parse(file.toString(), text, base);
        return new FleetConfig(Optional.of(file), clusters);
    }

    /**
     * Parses fleet YAML. {@code sourceName} is used in problem messages, {@code baseDir} resolves
     * relative paths.
     */
    public static List<ClusterSpec> parse(String sourceName, String text, Path baseDir) throws FleetException {
        Object root;
        try {
            root = new Load(LoadSettings.builder()
                            .setLabel(sourceName)
                            .setAllowDuplicateKeys(false)
                            .setAllowRecursiveKeys(false)
                            .setMaxAliasesForCollections(16)
                            .build())
                    .loadFromString(text);
        } catch (YamlEngineException e) {
            throw new FleetException(List.of(new Problem(
                    sourceName,
                    "",
                    "",
                    "not valid YAML: "
                            + e.getMessage().replaceAll("\\s*\\n\\s*", " ").strip())));
        }
        Parser p = new Parser(sourceName, baseDir);
        List<ClusterSpec> clusters = p.fleet(root);
        if (!p.problems.isEmpty()) {
            throw new FleetException(p.problems);
        }
        return clusters;
    }

    private static final class Parser {
        final String source;
        final Path baseDir;
        final List<Problem> problems = new ArrayList<>();
        String object = "";

        Parser(String source, Path baseDir) {
            this.source = source;
            this.baseDir = baseDir;
        }

        void problem(String field, String message) {
            problems.add(new Problem(source, object, field, message));
        }

        List<ClusterSpec> fleet(Object root) {
            if (!(root instanceof Map<?, ?> top)) {
                problem("", "expected a mapping with a 'clusters' list, found " + describe(root));
                return List.of();
            }
            unknownFields(top, TOP_FIELDS, "");
            if (!(top.get("clusters") instanceof List<?> list) || list.isEmpty()) {
                problem(
                        "clusters",
                        top.get("clusters") == null
                                ? "is required (a list of clusters)"
                                : "expected a non-empty list of clusters, found " + describe(top.get("clusters")));
                return List.of();
            }
            List<ClusterSpec> out = new ArrayList<>();
            Set<String> ids = new HashSet<>();
            for (int i = 0; i < list.size(); i++) {
                object = "clusters[" + i + "]";
                ClusterSpec c = cluster(list.get(i), ids);
                if (c != null) {
                    out.add(c);
                }
            }
            object = "";
            return out;
        }

        ClusterSpec cluster(Object entry, Set<String> ids) {
            if (!(entry instanceof Map<?, ?> m)) {
                problem("", "expected a mapping, found " + describe(entry));
                return null;
            }
            int before = problems.size();
            String id = null;
            if (m.get("id") instanceof String s) {
                String p = KubernetesNames.checkNamespace(s);
                if (p != null) {
                    problem("id", p);
                } else {
                    id = s;
                    object = "cluster " + s;
                    if (!ids.add(s)) {
                        problem("id", "another cluster has the same id");
                    }
                }
            } else {
                problem(
                        "id",
                        m.get("id") == null ? "is required" : "expected a string, found " + describe(m.get("id")));
            }
            unknownFields(m, CLUSTER_FIELDS, "");

            Optional<Path> kubeconfig = path(m, "kubeconfig");
            Optional<String> context = string(m, "context");
            boolean inCluster = bool(m, "inCluster", false);
            Optional<Path> manifests = path(m, "manifests");
            ClusterSource source = null;
            if (manifests.isPresent()) {
                if (kubeconfig.isPresent() || context.isPresent() || inCluster) {
                    problem(
                            "manifests",
                            "a cluster is either a folder of manifests or a Kubernetes API server: "
                                    + "remove kubeconfig, context and inCluster, or manifests");
                } else if (!Files.isDirectory(manifests.get())) {
                    problem("manifests", "'" + manifests.get() + "' is not a folder");
                } else {
                    source = new ClusterSource.ManifestFolder(manifests.get());
                }
            } else if (inCluster) {
                if (kubeconfig.isPresent() || context.isPresent()) {
                    problem("inCluster", "uses the pod's service account: remove kubeconfig and context, or inCluster");
                } else {
                    source = new ClusterSource.InCluster();
                }
            } else {
                if (kubeconfig.isPresent() && !Files.isRegularFile(kubeconfig.get())) {
                    problem("kubeconfig", "'" + kubeconfig.get() + "' is not a file");
                } else {
                    source = new ClusterSource.Kubeconfig(kubeconfig, context);
                }
            }
            ClusterSettings settings = settings(m.get("settings"));
            if (problems.size() > before || id == null || source == null || settings == null) {
                return null;
            }
            return new ClusterSpec(id, source, settings);
        }

        ClusterSettings settings(Object value) {
            if (value == null) {
                return ClusterSettings.DEFAULT;
            }
            if (!(value instanceof Map<?, ?> m)) {
                problem("settings", "expected a mapping, found " + describe(value));
                return null;
            }
            int before = problems.size();
            unknownFields(m, SETTINGS_FIELDS, "settings.");
            ClusterSettings d = ClusterSettings.DEFAULT;
            List<IpFamily> families = d.families();
            if (m.containsKey("families")) {
                families = new ArrayList<>();
                for (String s : strings(m, "families")) {
                    try {
                        families.add(IpFamily.fromId(s));
                    } catch (IllegalArgumentException e) {
                        problem("settings.families", e.getMessage());
                    }
                }
                if (families.isEmpty() && problems.size() == before) {
                    problem("settings.families", "must name at least one IP family (ipv4, ipv6)");
                }
            }
            List<Cidr> clusterCidrs = m.containsKey("clusterCIDRs") ? cidrs(m, "clusterCIDRs") : d.clusterCidrs();
            for (IpFamily f : IpFamily.values()) {
                if (clusterCidrs.stream().filter(c -> c.family() == f).count() > 1) {
                    problem("settings.clusterCIDRs", "at most one CIDR per IP family");
                }
            }
            boolean masqueradeAll = bool(m, "masqueradeAll", d.masqueradeAll(), "settings.");
            int masqueradeBit = d.masqueradeBit();
            if (m.containsKey("masqueradeBit")) {
                Object bit = m.get("masqueradeBit");
                if (!(bit instanceof Integer b)) {
                    problem("settings.masqueradeBit", "expected a number (0-31), found " + describe(bit));
                } else if (b < 0 || b > 31) {
                    problem("settings.masqueradeBit", b + " is out of range (0-31)");
                } else {
                    masqueradeBit = b;
                }
            }
            List<Cidr> nodePortAddresses =
                    m.containsKey("nodePortAddresses") ? cidrs(m, "nodePortAddresses") : d.nodePortAddresses();
            String ipvsScheduler = d.ipvsScheduler();
            if (m.containsKey("ipvsScheduler")) {
                Object sched = m.get("ipvsScheduler");
                String bad = sched instanceof String text
                        ? Service.checkIpvsScheduler(text)
                        : "expected a scheduler name, found " + describe(sched);
                if (bad != null) {
                    problem("settings.ipvsScheduler", bad);
                } else {
                    ipvsScheduler = (String) sched;
                }
            }
            if (problems.size() > before) {
                return null;
            }
            try {
                return new ClusterSettings(
                        families, clusterCidrs, masqueradeAll, masqueradeBit, nodePortAddresses, ipvsScheduler);
            } catch (IllegalArgumentException e) {
                problem("settings", e.getMessage());
                return null;
            }
        }

        List<Cidr> cidrs(Map<?, ?> m, String field) {
            List<Cidr> out = new ArrayList<>();
            List<String> values = strings(m, field);
            for (int i = 0; i < values.size(); i++) {
                try {
                    out.add(Cidr.parse(values.get(i)));
                } catch (IllegalArgumentException e) {
                    problem("settings." + field + "[" + i + "]", e.getMessage());
                }
            }
            return out;
        }

        List<String> strings(Map<?, ?> m, String field) {
            Object v = m.get(field);
            if (!(v instanceof List<?> l)) {
                problem("settings." + field, "expected a list, found " + describe(v));
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (int i = 0; i < l.size(); i++) {
                if (l.get(i) instanceof String s) {
                    out.add(s);
                } else {
                    problem("settings." + field + "[" + i + "]", "expected a string, found " + describe(l.get(i)));
                }
            }
            return out;
        }

        Optional<String> string(Map<?, ?> m, String field) {
            Object v = m.get(field);
            if (v == null) {
                return Optional.empty();
            }
            if (!(v instanceof String s) || s.isBlank()) {
                problem(field, "expected a non-empty string, found " + describe(v));
                return Optional.empty();
            }
            return Optional.of(s);
        }

        Optional<Path> path(Map<?, ?> m, String field) {
            return string(m, field).map(this::resolve);
        }

        /** {@code ~} is the user's home; other relative paths are relative to the fleet file's folder. */
        Path resolve(String s) {
            if (s.equals("~") || s.startsWith("~/")) {
                return Path.of(System.getProperty("user.home"))
                        .resolve(s.length() > 2 ? s.substring(2) : "")
                        .normalize();
            }
            Path p = Path.of(s);
            return (p.isAbsolute() || baseDir == null ? p : baseDir.resolve(p)).normalize();
        }

        boolean bool(Map<?, ?> m, String field, boolean dflt) {
            return bool(m, field, dflt, "");
        }

        boolean bool(Map<?, ?> m, String field, boolean dflt, String prefix) {
            Object v = m.get(field);
            if (v == null) {
                return dflt;
            }
            if (!(v instanceof Boolean b)) {
                problem(prefix + field, "expected true or false, found " + describe(v));
                return dflt;
            }
            return b;
        }

        void unknownFields(Map<?, ?> m, Set<String> known, String prefix) {
            Set<String> unknown = new TreeSet<>();
            for (Object k : m.keySet()) {
                if (!(k instanceof String s) || !known.contains(s)) {
                    unknown.add(String.valueOf(k));
                }
            }
            for (String u : unknown) {
                problem(
                        prefix + KubernetesNames.printable(u),
                        "unknown field (expected one of " + String.join(", ", new LinkedHashSet<>(new TreeSet<>(known)))
                                + ")");
            }
        }
    }

    private static String describe(Object v) {
        return Problem.describe(v);
    }
}
