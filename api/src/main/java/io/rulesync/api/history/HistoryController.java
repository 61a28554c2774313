package io.rulesync.api.history;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.PageSize;
import io.rulesync.api.params.VersionRef;
import io.rulesync.api.rollout.RolloutController;
import io.rulesync.api.snapshot.RecentVersions;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.constraints.Pattern;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * A cluster's history: its versions newest first (keyset pages: {@code ?before=V&limit=N}), one
 * version's metadata, the exact iptables-restore text a node ran at a version, and what changed
 * between two versions. Wherever a version is named ({@code /versions/V}, {@code ?from=V}),
 * {@code latest} names the cluster's newest.
 */
@RestController
public class HistoryController {
    private static final int MAX_LIMIT = 500;

    private final VersionHistory store;
    private final RecentVersions recent;
    private final RolloutStore rollouts;

    public HistoryController(VersionHistory store, RecentVersions recent, RolloutStore rollouts) {
        this.store = store;
        this.recent = recent;
        this.rollouts = rollouts;
    }

    /** One page of a cluster's history, and the link to the next (null on the last). */
    public record VersionsPage(String cluster, long head, List<VersionSummary> versions, String next) {}

    /** A version in the history: when and why it was made, and how much changed. */
    public record VersionSummary(
            long version,
            String lineage,
            String createdAt,
            Object cause,
            String causeSummary,
            int fragmentsChanged,
            int nodesChanged) {}

    /**
     * {@link VersionSummary} with the settings the version was compiled with, and, under a staged rollout, the steps its
     * rollout took (waves opened, bakes, a halt and its cause), oldest first. {@code causeSummary} is the cause as one line for
     * people, the same wherever it is shown.
     */
    public record VersionDetail(
            long version,
            String createdAt,
            Object cause,
            String causeSummary,
            int fragmentsChanged,
            int nodesChanged,
            Object settings,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<RolloutController.LogJson> rollout) {}

    /**
     * What {@code /diff} answers: the chains and rules of the nodes that changed, or one node's IPVS changes; and both as
     * the text of a unified diff ({@code text}), rendered here once for every reader.
     */
    public sealed interface Diff permits ChainsDiff, IpvsDiff, NftDiff {}

    public record ChainsDiff(
            String cluster, long from, long to, List<ChangedNodes> changes, List<String> unchangedNodes, String text)
            implements Diff {
        static ChainsDiff of(String cluster, long from, long to, List<ChangedNodes> changes, List<String> unchanged) {
            return new ChainsDiff(
                    cluster,
                    from,
                    to,
                    changes,
                    unchanged,
                    DiffText.chains(
                            DiffText.version(cluster, from), DiffText.version(cluster, to), changes, unchanged));
        }
    }

    /** Nodes that saw the same change; a node that joined or left lists no families. */
    public record ChangedNodes(
            List<String> nodes,
            String change,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<FamilyChanges> families) {}

    public record FamilyChanges(String family, List<TableChanges> tables) {}

    public record TableChanges(
            String table,
            List<VersionDiff.ChainRules> chainsAdded,
            List<String> chainsRemoved,
            List<ChainChanges> chainsChanged) {}

    public record ChainChanges(String chain, List<String> rulesRemoved, List<String> rulesAdded, boolean reordered) {}

    public record IpvsDiff(
            String cluster,
            long from,
            long to,
            String node,
            String mode,
            String change,
            List<IpvsFamilyChanges> families,
            String text)
            implements Diff {
        static IpvsDiff of(
                String cluster,
                long from,
                long to,
                String node,
                String mode,
                String change,
                List<IpvsFamilyChanges> families) {
            return new IpvsDiff(
                    cluster,
                    from,
                    to,
                    node,
                    mode,
                    change,
                    families,
                    DiffText.ipvs(
                            DiffText.version(cluster, from),
                            DiffText.version(cluster, to),
                            node,
                            mode,
                            change,
                            families));
        }
    }

    public record NftDiff(
            String cluster,
            long from,
            long to,
            String node,
            String mode,
            String change,
            List<NftFamilyChanges> families,
            String text)
            implements Diff {
        static NftDiff of(
                String cluster, long from, long to, String node, String change, List<NftFamilyChanges> families) {
            return new NftDiff(
                    cluster,
                    from,
                    to,
                    node,
                    "nftables",
                    change,
                    families,
                    DiffText.nftables(
                            DiffText.version(cluster, from), DiffText.version(cluster, to), node, change, families));
        }
    }

    /**
     * One family's table: its lines lost and gained ({@code nft -f} lines of the whole table), and the partial
     * transaction the agent runs for the change.
     */
    public record NftFamilyChanges(String family, List<String> removed, List<String> added, List<String> transaction) {}

    public record IpvsFamilyChanges(
            String family,
            List<String> virtualServersAdded,
            List<String> virtualServersRemoved,
            List<IpvsVersionDiff.ChangedServer> virtualServersChanged,
            List<IpvsVersionDiff.SetChange> sets,
            List<String> addressesBound,
            List<String> addressesUnbound,
            List<String> rulesAdded,
            List<String> rulesRemoved) {}

    @Operation(summary = "A cluster's history, newest first, in pages")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/versions")
    public VersionsPage versions(
            @PathVariable("cluster") String cluster,
            @RequestParam(name = "before", required = false)
                    @Pattern(regexp = "[1-9][0-9]{0,17}", message = "'%s' is not a version number")
                    String before,
            @RequestParam(name = "limit", required = false) @PageSize(max = MAX_LIMIT) String limit) {
        long head = ProblemResponses.knownHead(store, cluster);
        long from = before == null ? head + 1 : Long.parseLong(before);
        int n = limit == null ? 50 : Integer.parseInt(limit);
        List<VersionHistory.VersionInfo> page = store.versionsBefore(cluster, from, n);
        long last = page.isEmpty() ? 1 : page.get(page.size() - 1).seq();
        return new VersionsPage(
                cluster,
                head,
                page.stream().map(HistoryController::summary).toList(),
                page.size() == n && last > 1
                        ? "/api/v1/clusters/" + URLEncoder.encode(cluster, StandardCharsets.UTF_8) + "/versions?before="
                                + last + "&limit=" + n
                        : null);
    }

    @Operation(summary = "One version: when, why (the events or the operator action), settings")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}")
    public VersionDetail version(@PathVariable("cluster") String cluster, @PathVariable("version") VersionRef version) {
        VersionHistory.VersionInfo v = find(cluster, version, "version");
        JsonNode cause = parse(v.cause());
        return new VersionDetail(
                v.seq(),
                v.createdAt().toString(),
                cause,
                CauseText.summary(cause),
                v.fragmentsChanged(),
                v.nodesChanged(),
                parse(v.settings()),
                rollouts.log(cluster, v.seq()).stream()
                        .map(RolloutController.LogJson::of)
                        .toList());
    }

    @Operation(
            summary =
                    "The exact iptables-restore input of a node at a version; with ?mode=ipvs, its IPVS mode's "
                            + "ipvsadm-restore, ipset restore and iptables-restore inputs; with ?mode=nftables, the nft -f input of its kube-proxy table")
    @ApiResponse(
            responseCode = "200",
            description = "the rules, as the tools read them",
            content = @Content(mediaType = "text/plain", schema = @Schema(type = "string")))
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/rules")
    public ResponseEntity<String> rules(
            @PathVariable("cluster") String cluster,
            @PathVariable("version") VersionRef version,
            @RequestParam(name = "node") DnsSubdomain node,
            @RequestParam(name = "family", required = false)
                    @Parameter(
                            schema =
                                    @Schema(
                                            type = "string",
                                            allowableValues = {"ipv4", "ipv6"}))
                    IpFamily family,
            @RequestParam(name = "mode", required = false) RulesMode mode) {
        VersionHistory.VersionInfo found = find(cluster, version, "version");
        IpFamily f = family == null ? IpFamily.IPV4 : family;
        long v = found.seq();
        ClusterRules all = rulesAt(cluster, found);
        Optional<String> rules = switch (mode == null ? RulesMode.IPTABLES : mode) {
            case IPVS -> all.ipvs(node.name(), f).map(IpvsRules::render);
            case NFTABLES -> nftables(cluster, v, all, node.name(), f).map(NftTransaction::render);
            case IPTABLES -> all.ruleSet(node.name(), f).map(RuleSet::render);
        };
        if (rules.isEmpty()) {
            throw new ParameterProblem(
                    HttpStatus.NOT_FOUND,
                    "node",
                    "node: '" + node + "' is not a node of cluster '" + KubernetesNames.printable(cluster)
                            + "' at version " + v);
        }
        return ResponseEntity.ok().contentType(MediaType.TEXT_PLAIN).body(rules.get());
    }

    /** One node's nftables table, or the problem saying that the version was compiled before nftables mode. */
    private static Optional<NftTransaction> nftables(
            String cluster, long version, ClusterRules rules, String node, IpFamily f) {
        try {
            return rules.nftables(node, f);
        } catch (IllegalStateException e) {
            throw new ParameterProblem(
                    HttpStatus.NOT_FOUND,
                    "mode",
                    "mode: version " + version + " of cluster '" + KubernetesNames.printable(cluster)
                            + "' was compiled before nftables mode: it has no nftables rules");
        }
    }

    /** One node's nftables changes, per family that has any. */
    public static List<NftFamilyChanges> nftablesChanges(
            String cluster, long from, long to, String node, ClusterRules before, ClusterRules after) {
        List<NftFamilyChanges> families = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            NftVersionDiff d = NftVersionDiff.between(
                    f,
                    nftables(cluster, from, before, node, f).orElse(null),
                    nftables(cluster, to, after, node, f).orElse(null));
            if (!d.isEmpty()) {
                families.add(new NftFamilyChanges(f.id(), d.removed(), d.added(), d.transaction()));
            }
        }
        return families;
    }

    /** One node's IPVS changes, per family that has any. */
    private static IpvsDiff ipvsDiff(
            String cluster, long from, long to, String node, ClusterRules before, ClusterRules after) {
        List<IpvsFamilyChanges> families = ipvsChanges(node, before, after);
        return IpvsDiff.of(cluster, from, to, node, "ipvs", change(node, before, after, families.isEmpty()), families);
    }

    /** One node's IPVS changes between two rule sets, per family that has any. */
    public static List<IpvsFamilyChanges> ipvsChanges(String node, ClusterRules before, ClusterRules after) {
        List<IpvsFamilyChanges> families = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            IpvsVersionDiff d = IpvsVersionDiff.between(
                    f, before.ipvs(node, f).orElse(null), after.ipvs(node, f).orElse(null));
            if (d.isEmpty()) {
                continue;
            }
            families.add(new IpvsFamilyChanges(
                    f.id(),
                    d.virtualServersAdded(),
                    d.virtualServersRemoved(),
                    d.virtualServersChanged(),
                    d.sets(),
                    d.addressesBound(),
                    d.addressesUnbound(),
                    d.rulesAdded(),
                    d.rulesRemoved()));
        }
        return families;
    }

    /** {@code joined}, {@code left}, {@code unchanged} or {@code changed}: what became of one node. */
    public static String change(String node, ClusterRules before, ClusterRules after, boolean same) {
        boolean was = before.nodes().containsKey(node);
        boolean is = after.nodes().containsKey(node);
        return !was ? "joined" : !is ? "left" : same ? "unchanged" : "changed";
    }

    /**
     * Per node, what changed from version {@code from} (default: the one before) to this one: nodes
     * that joined or left, and for the others the chains added, removed and changed with their rule
     * differences. Nodes that see the same change are listed together; {@code ?node=} picks one.
     */
    @Operation(
            summary =
                    "Per node, the chains and rules that changed between two versions; with ?mode=ipvs&node=, the node's "
                            + "virtual servers, set members, addresses and IPVS rules that changed; with ?mode=nftables&node=, the lines of its "
                            + "kube-proxy table that changed and the partial transaction that applies them")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/versions/{version}/diff")
    public Diff diff(
            @PathVariable("cluster") String cluster,
            @PathVariable("version") VersionRef version,
            @RequestParam(name = "from", required = false) VersionRef from,
            @RequestParam(name = "node", required = false) DnsSubdomain node,
            @RequestParam(name = "mode", required = false) RulesMode mode) {
        if ((mode == RulesMode.IPVS || mode == RulesMode.NFTABLES) && node == null) {
            // Every node's IPVS configuration and nftables table hold its own addresses, so no two nodes share a diff.
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "node", "node: mode=" + mode + " needs ?node=NAME");
        }
        VersionHistory.VersionInfo to = find(cluster, version, "version");
        long fromSeq = from == null ? to.seq() - 1 : find(cluster, from, "from").seq();
        // The version before the oldest kept one is gone: its diff needs a ?from= that is kept (410 says which are).
        ClusterRules before = fromSeq == 0
                ? ClusterRules.EMPTY
                : rulesAt(
                        cluster,
                        store.version(cluster, fromSeq)
                                .orElseThrow(() -> ProblemResponses.noSuchVersion(
                                        cluster, fromSeq, store.oldest(cluster), store.head(cluster), "from")));
        ClusterRules after = rulesAt(cluster, to);
        String only = node == null ? null : node.name();
        if (only != null && !before.nodes().containsKey(only) && !after.nodes().containsKey(only)) {
            throw new ParameterProblem(
                    HttpStatus.NOT_FOUND,
                    "node",
                    "node: '" + only + "' is a node of cluster '" + KubernetesNames.printable(cluster)
                            + "' at neither version " + fromSeq + " nor " + to.seq());
        }
        if (mode == RulesMode.IPVS) {
            return ipvsDiff(cluster, fromSeq, to.seq(), only, before, after);
        }
        if (mode == RulesMode.NFTABLES) {
            List<NftFamilyChanges> families = nftablesChanges(cluster, fromSeq, to.seq(), only, before, after);
            return NftDiff.of(
                    cluster, fromSeq, to.seq(), only, change(only, before, after, families.isEmpty()), families);
        }
        VersionDiff.Result d = VersionDiff.between(before, after, only == null ? n -> true : only::equals);
        return ChainsDiff.of(
                cluster,
                fromSeq,
                to.seq(),
                d.groups().stream().map(HistoryController::changes).toList(),
                d.unchanged());
    }

    private ClusterRules rulesAt(String cluster, VersionHistory.VersionInfo v) {
        return recent.get(
                        cluster,
                        v.seq(),
                        v.lineage(),
                        () -> Optional.of(
                                new RecentVersions.StoredVersion(v.createdAt(), store.rules(cluster, v.seq()))))
                .orElseThrow()
                .rules();
    }

    /** A group of {@link VersionDiff} as the api answers it. */
    public static ChangedNodes changes(VersionDiff.NodeGroup g) {
        return new ChangedNodes(
                g.nodes(),
                g.change(),
                g.families().stream()
                        .map(f -> new FamilyChanges(
                                f.family().id(),
                                f.tables().stream()
                                        .map(t -> new TableChanges(
                                                t.table().restoreName(),
                                                t.added(),
                                                t.removed(),
                                                t.changed().stream()
                                                        .map(c -> new ChainChanges(
                                                                c.chain(),
                                                                c.removedRules(),
                                                                c.addedRules(),
                                                                c.reordered()))
                                                        .toList()))
                                        .toList()))
                        .toList());
    }

    /**
     * The version {@code parameter} names (the path's, or {@code ?from=}), or the problem saying why
     * there is none.
     */
    private VersionHistory.VersionInfo find(String cluster, VersionRef version, String parameter) {
        long head = ProblemResponses.knownHead(store, cluster);
        long seq = version.resolve(head);
        return store.version(cluster, seq)
                .orElseThrow(
                        () -> ProblemResponses.noSuchVersion(cluster, seq, store.oldest(cluster), head, parameter));
    }

    private static VersionSummary summary(VersionHistory.VersionInfo v) {
        JsonNode cause = parse(v.cause());
        return new VersionSummary(
                v.seq(),
                v.lineage(),
                v.createdAt().toString(),
                cause,
                CauseText.summary(cause),
                v.fragmentsChanged(),
                v.nodesChanged());
    }

    /**
     * A stored JSON column (cause, settings) as a JSON value, not a string holding JSON: read by the model's
     * mapper, which wrote it.
     */
    private static JsonNode parse(String json) {
        return json == null ? null : Json.MAPPER.readTree(json);
    }
}
