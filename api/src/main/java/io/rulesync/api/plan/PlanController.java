package io.rulesync.api.plan;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.history.DiffText;
import io.rulesync.api.history.HistoryController;
import io.rulesync.api.history.HistoryController.ChangedNodes;
import io.rulesync.api.history.HistoryController.IpvsFamilyChanges;
import io.rulesync.api.history.HistoryController.NftFamilyChanges;
import io.rulesync.api.history.RulesMode;
import io.rulesync.api.history.VersionDiff;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.compiler.plan.WhatIf;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.ManifestObjects;
import io.rulesync.model.manifest.ManifestParser;
import io.rulesync.model.manifest.Problem;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.parameters.RequestBody;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SortedMap;
import java.util.TreeMap;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /api/v1/clusters/{cluster}/plan}: what the manifests in the body would do to each node's rules if the
 * cluster's watcher saw them applied (or, with {@code ?delete=true}, removed), compiled as the compiler would and stored
 * nowhere. The answer is the habit of {@code kubectl diff} and {@code terraform plan}: each object and what it would do,
 * what admission would refuse, and per group of nodes that would see the same change a unified diff of their rules.
 *
 * <p>A plan reads and changes nothing but its answer, so viewers may ask for one (a pull request's check needs no operator
 * token). The body is read object by object as it arrives, never whole.
 */
@RestController
public class PlanController {
    private static final String YAML = "application/yaml";
    private static final String JSON = "application/json";
    /** IPVS and nftables diffs shown without ?mode=: each assembles a node's whole IPVS configuration or table. */
    private static final int MAX_MODE_NODES = 10;

    private final PlanBases bases;
    private final VersionHistory versions;
    private final NodeStatusStore nodes;
    private final Clock clock;

    public PlanController(PlanBases bases, VersionHistory versions, NodeStatusStore nodes, Clock clock) {
        this.bases = bases;
        this.versions = versions;
        this.nodes = nodes;
        this.clock = clock;
    }

    /** One object of the body and what it would do: created, changed, unchanged, deleted or absent. */
    public record PlannedObject(String object, String change) {}

    /** What admission would refuse (or let in again): the object, its field, and why. */
    public record Refusal(String object, String field, String message) {
        static Refusal of(Problem p) {
            return new Refusal(p.object(), p.field(), p.message());
        }
    }

    /** One node's IPVS changes: {@code change} is joined, left, changed or unchanged. */
    public record IpvsNodeChanges(String node, String change, List<IpvsFamilyChanges> families) {}

    /** One node's nftables changes: {@code change} is joined, left, changed or unchanged. */
    public record NftNodeChanges(String node, String change, List<NftFamilyChanges> families) {}

    /**
     * The plan: the cluster's newest version it starts from, each object and what it would do, what admission would newly
     * refuse ({@code refused}) or let in again ({@code admitted}), whether any node's rules would change ({@code changes},
     * IPVS mode's included), how many nodes' iptables rules would ({@code nodesAffected}, joined and left included), and the
     * diff: per group of nodes ({@code nodeChanges}), with the IPVS changes of one node of each group that runs IPVS mode
     * ({@code ipvsNodes}; with {@code ?mode=ipvs&node=}, that node's alone), and likewise the nftables changes of one
     * node of each group that runs nftables mode ({@code nftablesNodes}; {@code ?mode=nftables&node=}). {@code modes}
     * counts the nodes by the mode they last reported running. {@code text} is all of it as a unified diff, ready to show.
     */
    public record Plan(
            String cluster,
            long version,
            String action,
            List<PlannedObject> objects,
            List<Refusal> refused,
            List<Refusal> admitted,
            boolean changes,
            int nodesAffected,
            List<ChangedNodes> nodeChanges,
            List<String> unchangedNodes,
            List<IpvsNodeChanges> ipvsNodes,
            List<NftNodeChanges> nftablesNodes,
            SortedMap<String, Integer> modes,
            String text) {}

    @Operation(
            summary =
                    "What the manifests in the body would change in each node's rules if applied (or removed, with "
                            + "?delete=true): each object's change, what admission would refuse, and a unified diff per group of nodes; stores nothing",
            requestBody =
                    @RequestBody(
                            required = true,
                            description = "Kubernetes manifests: YAML (several documents, Lists) or JSON. "
                                    + "Services, EndpointSlices and Nodes are planned; other kinds are skipped.",
                            content = {
                                @Content(mediaType = YAML, schema = @Schema(type = "string")),
                                @Content(mediaType = JSON, schema = @Schema(type = "string"))
                            }))
    @Access({Role.VIEWER, Role.OPERATOR})
    @PostMapping(
            path = "/api/v1/clusters/{cluster}/plan",
            consumes = {YAML, JSON})
    public Plan plan(
            @PathVariable("cluster") String cluster,
            @RequestParam(name = "delete", required = false, defaultValue = "false")
                    @Parameter(description = "true: the objects are removed, not applied")
                    boolean delete,
            @RequestParam(name = "node", required = false) DnsSubdomain node,
            @RequestParam(name = "mode", required = false) RulesMode mode,
            HttpServletRequest request) {
        if ((mode == RulesMode.IPVS || mode == RulesMode.NFTABLES) && node == null) {
            throw new ParameterProblem(HttpStatus.BAD_REQUEST, "node", "node: mode=" + mode + " needs ?node=NAME");
        }
        ProblemResponses.knownHead(versions, cluster);
        List<ClusterObject> objects = read(request);
        PlanBases.Start start;
        try {
            start = bases.start(cluster).orElseThrow(() -> ProblemResponses.unknownCluster(cluster));
        } catch (PlanBases.Incomplete e) {
            throw new ParameterProblem(HttpStatus.CONFLICT, "cluster", e.getMessage());
        }
        WhatIf.Action action = delete ? WhatIf.Action.DELETE : WhatIf.Action.APPLY;
        WhatIf.Outcome o = WhatIf.of(start.head(), objects, action, clock.instant());
        String only = node == null ? null : node.name();
        if (only != null
                && !o.before().nodes().containsKey(only)
                && !o.after().nodes().containsKey(only)) {
            throw new ParameterProblem(
                    HttpStatus.NOT_FOUND,
                    "node",
                    "node: '" + only + "' is not a node of cluster '" + KubernetesNames.printable(cluster) + "'");
        }
        List<PlannedObject> planned = o.objects().stream()
                .map(c -> new PlannedObject(c.object(), c.change().name().toLowerCase(Locale.ROOT)))
                .toList();
        List<Refusal> refused = o.refused().stream().map(Refusal::of).toList();
        List<Refusal> admitted = o.admitted().stream().map(Refusal::of).toList();
        SortedMap<String, String> modeOf = modeByNode(cluster);
        SortedMap<String, Integer> modes = new TreeMap<>();
        modeOf.values().forEach(m -> modes.merge(m, 1, Integer::sum));
        String from = DiffText.version(cluster, start.version());
        String to = from + " with " + objects.size() + " object" + (objects.size() == 1 ? "" : "s")
                + (delete ? " removed" : " applied");
        StringBuilder text = DiffText.header(from, to);
        planned.forEach(p -> text.append(' ')
                .append(p.object())
                .append(": ")
                .append(p.change())
                .append('\n'));
        refused.forEach(r -> text.append(" refused: ").append(line(r)).append('\n'));
        admitted.forEach(
                r -> text.append(" no longer refused: ").append(r.object()).append('\n'));
        String act = action.name().toLowerCase(Locale.ROOT);
        if (mode == RulesMode.IPVS) {
            IpvsNodeChanges one = ipvs(only, o);
            DiffText.ipvsHunk(text, only, "ipvs", one.change(), one.families());
            return new Plan(
                    cluster,
                    start.version(),
                    act,
                    planned,
                    refused,
                    admitted,
                    !o.diff().isEmpty(),
                    one.change().equals("unchanged") ? 0 : 1,
                    List.of(),
                    List.of(),
                    List.of(one),
                    List.of(),
                    modes,
                    text.toString());
        }
        if (mode == RulesMode.NFTABLES) {
            NftNodeChanges one = nftables(cluster, start.version(), only, o);
            DiffText.nftablesHunk(text, only, one.change(), one.families());
            return new Plan(
                    cluster,
                    start.version(),
                    act,
                    planned,
                    refused,
                    admitted,
                    !o.diff().isEmpty(),
                    one.change().equals("unchanged") ? 0 : 1,
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(one),
                    modes,
                    text.toString());
        }
        VersionDiff.Result d = VersionDiff.between(o.before(), o.after(), only == null ? n -> true : only::equals);
        List<ChangedNodes> groups =
                d.groups().stream().map(HistoryController::changes).toList();
        DiffText.hunks(text, groups, d.unchanged());
        List<IpvsNodeChanges> ipvs = new ArrayList<>();
        List<NftNodeChanges> nft = new ArrayList<>();
        if (mode == null && !o.diff().isEmpty()) {
            // Nodes that run IPVS or nftables mode see their configuration change too: shown for one node of each group
            // (the others of a group differ only where a node's own addresses are), and of the unchanged nodes, whose
            // IPVS
            // part alone may change (a scheduler).
            List<List<String>> sets = new ArrayList<>(groups.stream()
                    .filter(g -> g.change().equals("changed"))
                    .map(ChangedNodes::nodes)
                    .toList());
            sets.add(d.unchanged());
            for (List<String> set : sets) {
                if (ipvs.size() < MAX_MODE_NODES) {
                    set.stream()
                            .filter(n -> runs("ipvs", modeOf.get(n)))
                            .findFirst()
                            .map(n -> ipvs(n, o))
                            .filter(c -> !c.families().isEmpty())
                            .ifPresent(ipvs::add);
                }
                if (nft.size() < MAX_MODE_NODES) {
                    set.stream()
                            .filter(n -> runs("nftables", modeOf.get(n)))
                            .findFirst()
                            .map(n -> nftables(cluster, start.version(), n, o))
                            .filter(c -> !c.families().isEmpty())
                            .ifPresent(nft::add);
                }
            }
            for (IpvsNodeChanges c : ipvs) {
                text.append(" (IPVS mode, as ").append(c.node()).append(" runs it)\n");
                DiffText.ipvsHunk(text, c.node(), "ipvs", c.change(), c.families());
            }
            for (NftNodeChanges c : nft) {
                text.append(" (nftables mode, as ").append(c.node()).append(" runs it)\n");
                DiffText.nftablesHunk(text, c.node(), c.change(), c.families());
            }
        }
        int affected = groups.stream().mapToInt(g -> g.nodes().size()).sum();
        return new Plan(
                cluster,
                start.version(),
                act,
                planned,
                refused,
                admitted,
                !o.diff().isEmpty(),
                affected,
                groups,
                d.unchanged(),
                ipvs,
                nft,
                modes,
                text.toString());
    }

    /** One node's nftables changes in the plan. */
    private static NftNodeChanges nftables(String cluster, long version, String node, WhatIf.Outcome o) {
        List<NftFamilyChanges> families =
                HistoryController.nftablesChanges(cluster, version, version, node, o.before(), o.after());
        return new NftNodeChanges(
                node, HistoryController.change(node, o.before(), o.after(), families.isEmpty()), families);
    }

    /** One node's IPVS changes in the plan. */
    private static IpvsNodeChanges ipvs(String node, WhatIf.Outcome o) {
        List<IpvsFamilyChanges> families = HistoryController.ipvsChanges(node, o.before(), o.after());
        return new IpvsNodeChanges(
                node, HistoryController.change(node, o.before(), o.after(), families.isEmpty()), families);
    }

    /** The body's objects, decoded as they are read; every problem with them is one 400. */
    private static List<ClusterObject> read(HttpServletRequest request) {
        ManifestObjects objects = new ManifestObjects();
        List<Problem> problems = new ArrayList<>();
        try (Reader body = new InputStreamReader(
                request.getInputStream(),
                StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT))) {
            ManifestParser.parseEach("body", body, request.getContentLengthLong(), objects, problems);
        } catch (UncheckedIOException | IOException e) {
            throw new ParameterProblem(
                    HttpStatus.BAD_REQUEST,
                    "body",
                    "body: cannot be read as UTF-8 text: "
                            + (e.getCause() == null
                                    ? e.getMessage()
                                    : e.getCause().getMessage()));
        }
        // The objects' problems first: a syntax error ends the read, after the documents before it.
        problems.addAll(0, objects.problems());
        try {
            if (!problems.isEmpty()) {
                throw new ManifestException(problems);
            }
            return objects.objects();
        } catch (ManifestException e) {
            throw new ParameterProblem(
                            HttpStatus.BAD_REQUEST,
                            "body",
                            "body: " + e.problems().size() + " problem(s) with the manifests; " + "the first: "
                                    + e.problems().get(0))
                    .with(
                            "problems",
                            e.problems().stream().map(Problem::toString).toList());
        }
    }

    /** Whether an ack's mode is {@code wanted} ("ipvs", "nftables", with a note in parentheses where there is one). */
    private static boolean runs(String wanted, String mode) {
        return mode != null && (mode.equals(wanted) || mode.startsWith(wanted + " "));
    }

    /** The mode each node of the cluster last reported running. */
    private SortedMap<String, String> modeByNode(String cluster) {
        SortedMap<String, String> out = new TreeMap<>();
        for (NodeStatus s : nodes.nodeStatus(cluster)) {
            if (s.mode() != null) {
                out.put(s.node(), s.mode());
            }
        }
        return out;
    }

    private static String line(Refusal r) {
        return r.object() + (r.field().isEmpty() ? "" : ": " + r.field()) + ": " + r.message();
    }
}
