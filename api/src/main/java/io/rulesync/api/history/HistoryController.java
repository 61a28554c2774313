package io.rulesync.api.history;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.snapshot.RecentVersions;
import io.rulesync.api.snapshot.Snapshots;
import io.rulesync.store.VersionHistory;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.RuleSet;
import io.swagger.v3.oas.annotations.Operation;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A cluster's history: its versions newest first (keyset pages: {@code ?before=V&limit=N}), one
 * version's metadata, the exact iptables-restore text a node ran at a version, and what changed
 * between two versions. Wherever a version is named ({@code /versions/V}, {@code ?from=V}),
 * {@code latest} names the cluster's newest.
 */
@RestController
public class HistoryController {
    private static final Pattern NUMBER = Pattern.compile("[1-9][0-9]{0,17}");
    private static final int MAX_LIMIT = 500;

    private final VersionHistory store;
    private final RecentVersions recent;

    public HistoryController(VersionHistory store, RecentVersions recent) {
        this.store = store;
        this.recent = recent;
    }

    @Operation(summary = "A cluster's history, newest first, in pages")
    @GetMapping("/api/v1/clusters/{cluster}/versions")
    public ResponseEntity<?> versions(@PathVariable("cluster") String cluster, @RequestParam(name = "before", required = false) String before,
            @RequestParam(name = "limit", required = false) String limit) {
        long head = store.head(cluster);
        if (head == 0) {
            return ProblemResponses.unknownCluster(cluster);
        }
        if (before != null && !NUMBER.matcher(before).matches()) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "before", "before: '" + KubernetesNames.printable(before) + "' is not a version number");
        }
        if (limit != null && (!NUMBER.matcher(limit).matches() || limit.length() > 3 || Integer.parseInt(limit) > MAX_LIMIT)) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "limit", "limit: '" + KubernetesNames.printable(limit) + "' is not 1-" + MAX_LIMIT);
        }
        long from = before == null ? head + 1 : Long.parseLong(before);
        int n = limit == null ? 50 : Integer.parseInt(limit);
        List<VersionHistory.VersionInfo> page = store.versionsBefore(cluster, from, n);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", cluster);
        body.put("head", head);
        body.put("versions", page.stream().map(HistoryController::json).toList());
        long last = page.isEmpty() ? 1 : page.get(page.size() - 1).seq();
        body.put("next", page.size() == n && last > 1
                ? "/api/v1/clusters/" + URLEncoder.encode(cluster, StandardCharsets.UTF_8) + "/versions?before=" + last + "&limit=" + n : null);
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    @Operation(summary = "One version: when, why (the events or the operator action), settings")
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}")
    public ResponseEntity<?> version(@PathVariable("cluster") String cluster, @PathVariable("version") String version) {
        Object found = find(cluster, version);
        if (found instanceof ResponseEntity<?> problem) {
            return problem;
        }
        Map<String, Object> body = json((VersionHistory.VersionInfo) found);
        body.put("settings", parse(((VersionHistory.VersionInfo) found).settings()));
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    @Operation(summary = "The exact iptables-restore input of a node at a version; with ?mode=ipvs, its IPVS mode's "
            + "ipvsadm-restore, ipset restore and iptables-restore inputs")
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/rules")
    public ResponseEntity<?> rules(@PathVariable("cluster") String cluster, @PathVariable("version") String version,
            @RequestParam(name = "node", required = false) String node, @RequestParam(name = "family", required = false) String family,
            @RequestParam(name = "mode", required = false) String mode) {
        Object found = find(cluster, version);
        if (found instanceof ResponseEntity<?> problem) {
            return problem;
        }
        if (node == null || KubernetesNames.checkSubdomain(node) != null) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "node", "node: " + (node == null ? "the query parameter ?node=NAME is required"
                    : KubernetesNames.checkSubdomain(node)));
        }
        IpFamily f;
        try {
            f = IpFamily.fromId(family == null ? "ipv4" : family);
        } catch (IllegalArgumentException e) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "family", "family: '" + KubernetesNames.printable(family) + "' is not ipv4 or ipv6");
        }
        Optional<ResponseEntity<?>> badMode = badMode(mode);
        if (badMode.isPresent()) {
            return badMode.get();
        }
        long v = ((VersionHistory.VersionInfo) found).seq();
        ClusterRules all = rulesAt(cluster, (VersionHistory.VersionInfo) found);
        Optional<String> rules = "ipvs".equals(mode) ? all.ipvs(node, f).map(IpvsRules::render) : all.ruleSet(node, f).map(RuleSet::render);
        if (rules.isEmpty()) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, "node", "node: '" + node + "' is not a node of cluster '"
                    + KubernetesNames.printable(cluster) + "' at version " + v);
        }
        return ResponseEntity.ok().contentType(MediaType.TEXT_PLAIN).body(rules.get());
    }

    /** One node's IPVS changes, per family that has any. */
    private static Map<String, Object> ipvsDiff(String cluster, long from, long to, String node, ClusterRules before, ClusterRules after) {
        List<Map<String, Object>> families = new java.util.ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            IpvsVersionDiff d = IpvsVersionDiff.between(f, before.ipvs(node, f).orElse(null), after.ipvs(node, f).orElse(null));
            if (d.isEmpty()) {
                continue;
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("family", f.id());
            m.put("virtualServersAdded", d.virtualServersAdded());
            m.put("virtualServersRemoved", d.virtualServersRemoved());
            m.put("virtualServersChanged", d.virtualServersChanged());
            m.put("sets", d.sets());
            m.put("addressesBound", d.addressesBound());
            m.put("addressesUnbound", d.addressesUnbound());
            m.put("rulesAdded", d.rulesAdded());
            m.put("rulesRemoved", d.rulesRemoved());
            families.add(m);
        }
        boolean was = before.nodes().containsKey(node);
        boolean is = after.nodes().containsKey(node);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", cluster);
        body.put("from", from);
        body.put("to", to);
        body.put("node", node);
        body.put("mode", "ipvs");
        body.put("change", !was ? "joined" : !is ? "left" : families.isEmpty() ? "unchanged" : "changed");
        body.put("families", families);
        return body;
    }

    /**
     * Per node, what changed from version {@code from} (default: the one before) to this one: nodes
     * that joined or left, and for the others the chains added, removed and changed with their rule
     * differences. Nodes that see the same change are listed together; {@code ?node=} picks one.
     */
    @Operation(summary = "Per node, the chains and rules that changed between two versions; with ?mode=ipvs&node=, the node's "
            + "virtual servers, set members, addresses and IPVS rules that changed")
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/diff")
    public ResponseEntity<?> diff(@PathVariable("cluster") String cluster, @PathVariable("version") String version,
            @RequestParam(name = "from", required = false) String from, @RequestParam(name = "node", required = false) String node,
            @RequestParam(name = "mode", required = false) String mode) {
        Optional<ResponseEntity<?>> badMode = badMode(mode);
        if (badMode.isPresent()) {
            return badMode.get();
        }
        if ("ipvs".equals(mode) && node == null) {
            // Every node's IPVS configuration holds its own addresses, so no two nodes share a diff.
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "node", "node: mode=ipvs needs ?node=NAME");
        }
        Object found = find(cluster, version);
        if (found instanceof ResponseEntity<?> problem) {
            return problem;
        }
        VersionHistory.VersionInfo to = (VersionHistory.VersionInfo) found;
        long fromSeq = to.seq() - 1;
        if (from != null) {
            Object base = find(cluster, from, "from");
            if (base instanceof ResponseEntity<?> problem) {
                return problem;
            }
            fromSeq = ((VersionHistory.VersionInfo) base).seq();
        }
        if (node != null && KubernetesNames.checkSubdomain(node) != null) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "node", "node: " + KubernetesNames.checkSubdomain(node));
        }
        ClusterRules before = fromSeq == 0 ? ClusterRules.EMPTY : rulesAt(cluster, store.version(cluster, fromSeq).orElseThrow());
        ClusterRules after = rulesAt(cluster, to);
        if (node != null && !before.nodes().containsKey(node) && !after.nodes().containsKey(node)) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, "node", "node: '" + node + "' is a node of cluster '"
                    + KubernetesNames.printable(cluster) + "' at neither version " + fromSeq + " nor " + to.seq());
        }
        if ("ipvs".equals(mode)) {
            return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(ipvsDiff(cluster, fromSeq, to.seq(), node, before, after));
        }
        VersionDiff.Result d = VersionDiff.between(before, after, node == null ? n -> true : node::equals);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", cluster);
        body.put("from", fromSeq);
        body.put("to", to.seq());
        body.put("changes", d.groups().stream().map(HistoryController::json).toList());
        body.put("unchangedNodes", d.unchanged());
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    /** The problem with {@code ?mode=}, if any: absent, iptables and ipvs are the modes. */
    private static Optional<ResponseEntity<?>> badMode(String mode) {
        return mode == null || mode.equals("iptables") || mode.equals("ipvs") ? Optional.empty()
                : Optional.of(ProblemResponses.about(HttpStatus.BAD_REQUEST, "mode", "mode: '" + KubernetesNames.printable(mode)
                        + "' is not iptables or ipvs"));
    }

    private ClusterRules rulesAt(String cluster, VersionHistory.VersionInfo v) {
        return recent.get(cluster, v.seq(), () -> Optional.of(new RecentVersions.StoredVersion(v.createdAt(),
                store.rules(cluster, v.seq())))).orElseThrow().rules();
    }

    private static Map<String, Object> json(VersionDiff.NodeGroup g) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("nodes", g.nodes());
        m.put("change", g.change());
        if (!g.families().isEmpty()) {
            m.put("families", g.families().stream().map(f -> {
                Map<String, Object> fm = new LinkedHashMap<>();
                fm.put("family", f.family().id());
                fm.put("tables", f.tables().stream().map(t -> {
                    Map<String, Object> tm = new LinkedHashMap<>();
                    tm.put("table", t.table().restoreName());
                    tm.put("chainsAdded", t.added().stream().map(c -> Map.of("chain", c.chain(), "rules", c.rules())).toList());
                    tm.put("chainsRemoved", t.removed());
                    tm.put("chainsChanged", t.changed().stream().map(c -> {
                        Map<String, Object> cm = new LinkedHashMap<>();
                        cm.put("chain", c.chain());
                        cm.put("rulesRemoved", c.removedRules());
                        cm.put("rulesAdded", c.addedRules());
                        cm.put("reordered", c.reordered());
                        return cm;
                    }).toList());
                    return tm;
                }).toList());
                return fm;
            }).toList());
        }
        return m;
    }

    /** The version's row, or the problem response saying why there is none. */
    private Object find(String cluster, String version) {
        return find(cluster, version, "version");
    }

    /**
     * {@link #find(String, String)} for a version named by {@code parameter} (the path's, or
     * {@code ?from=}): a number, or {@value Snapshots#LATEST} for the cluster's newest.
     */
    private Object find(String cluster, String version, String parameter) {
        if (!version.equals(Snapshots.LATEST) && !NUMBER.matcher(version).matches()) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, parameter, parameter + ": '" + KubernetesNames.printable(version)
                    + "' is not a version number (1, 2, ...) or '" + Snapshots.LATEST + "'");
        }
        long head = store.head(cluster);
        if (head == 0) {
            return ProblemResponses.unknownCluster(cluster);
        }
        long seq = version.equals(Snapshots.LATEST) ? head : Long.parseLong(version);
        Optional<VersionHistory.VersionInfo> info = store.version(cluster, seq);
        if (info.isEmpty()) {
            return ProblemResponses.about(HttpStatus.NOT_FOUND, parameter, parameter + ": cluster '" + KubernetesNames.printable(cluster)
                    + "' has no version " + version + " (its versions are 1-" + head + ")");
        }
        return info.get();
    }

    private static Map<String, Object> json(VersionHistory.VersionInfo v) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", v.seq());
        m.put("createdAt", v.createdAt().toString());
        m.put("cause", parse(v.cause()));
        m.put("fragmentsChanged", v.fragmentsChanged());
        m.put("nodesChanged", v.nodesChanged());
        return m;
    }

    /** The stored JSON documents (cause, settings) as JSON values, not as strings holding JSON. */
    private static Object parse(String json) {
        return json == null ? null : new Load(LoadSettings.builder().build()).loadFromString(json);
    }
}
