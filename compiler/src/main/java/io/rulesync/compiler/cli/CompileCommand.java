package io.rulesync.compiler.cli;

import io.rulesync.compiler.admission.Admission;
import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.iptables.UnknownNodeException;
import io.rulesync.compiler.ipvs.IpvsCompiler;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.nftables.NftTransaction;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code rulesync compile}: the iptables-restore input kube-proxy would write on one node for the
 * objects in some manifests. Other tools depend on this contract: exit 0 with the rules on stdout
 * (or in {@code -o FILE}); exit 2 with one line per problem on stderr and nothing on stdout. What the
 * API server's allocators would have refused (a ClusterIP or NodePort claimed by two Services) is
 * not bad input but a conflict, resolved as the compiler service resolves it ({@link Admission}):
 * one {@code warning:} line per conflict on stderr, and the rules without the Service left out.
 */
@Command(
        name = "compile",
        description = "Print the iptables-restore input (filter and nat tables) that kube-proxy (iptables mode) "
                + "would write on NODE for the Services, EndpointSlices and Nodes in the given manifests; with --mode ipvs, "
                + "IPVS mode's ipvsadm-restore, ipset restore and iptables-restore inputs, in three sections; with --mode nftables, "
                + "the nft -f input of its kube-proxy table of each family. "
                + "A Service claiming a ClusterIP or NodePort another Service (earlier in namespace/name order) holds is "
                + "left out, with a warning on stderr, as the API server would have refused it.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class CompileCommand implements Callable<Integer> {
    static final int EXIT_BAD_INPUT = 2;

    @Spec
    private CommandSpec spec;

    @Option(
            names = {"-f", "--filename"},
            required = true,
            paramLabel = "PATH",
            description =
                    "YAML or JSON file, or folder of them (multi-document YAML and kind: List are read). Repeatable.")
    private List<Path> paths = new ArrayList<>();

    @Option(names = "--node", required = true, paramLabel = "NODE", description = "Name of the Node to compile for.")
    private String node;

    @Option(
            names = "--cluster-cidr",
            paramLabel = "CIDR",
            converter = CidrConverter.class,
            split = ",",
            description =
                    "Pod CIDR(s), at most one per family: traffic from outside them to a ClusterIP is masqueraded.")
    private List<Cidr> clusterCidrs = new ArrayList<>();

    @Option(
            names = "--ip-family",
            paramLabel = "ipv4|ipv6",
            converter = FamilyConverter.class,
            description =
                    "Family of the rule set: ipv4 (iptables-restore) or ipv6 (ip6tables-restore). Default: ipv4; with "
                            + "--mode nftables, every family the node has an address of (a table each).")
    private IpFamily family;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write the rules to FILE instead of stdout.")
    private Path output;

    @Option(
            names = "--masquerade-all",
            description = "SNAT all traffic sent to ClusterIPs (kube-proxy --masquerade-all).")
    private boolean masqueradeAll;

    @Option(
            names = "--masquerade-bit",
            paramLabel = "BIT",
            defaultValue = "14",
            description =
                    "Bit of the fwmark that marks packets to SNAT (kube-proxy --iptables-masquerade-bit). Default: ${DEFAULT-VALUE}.")
    private int masqueradeBit;

    @Option(
            names = "--nodeport-addresses",
            paramLabel = "CIDR",
            converter = CidrConverter.class,
            split = ",",
            description = "Serve NodePorts only on node addresses in these CIDRs (kube-proxy --nodeport-addresses).")
    private List<Cidr> nodePortAddresses = new ArrayList<>();

    @Option(
            names = "--mode",
            paramLabel = "iptables|ipvs|nftables",
            defaultValue = "iptables",
            description =
                    "kube-proxy's mode to compile for; nftables prints an nft -f input that loads the node's whole "
                            + "kube-proxy tables (kube-proxy v1.33.6's layout). Default: ${DEFAULT-VALUE}.")
    private String mode;

    @Option(
            names = "--ipvs-scheduler",
            paramLabel = "NAME",
            defaultValue = IpvsCompiler.DEFAULT_SCHEDULER,
            description = "IPVS scheduler of Services without the " + Service.IPVS_SCHEDULER_ANNOTATION + " annotation "
                    + "(rr, wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq, mh). Default: ${DEFAULT-VALUE}.")
    private String ipvsScheduler;

    @Option(
            names = "--max-file-size",
            paramLabel = "MIB",
            defaultValue = "1024",
            description =
                    "Refuse manifest files larger than this, unread: a safety net against a wrong path. Files are read "
                            + "object by object (an object is at most 3 MiB, as in Kubernetes), so memory does not grow with them. "
                            + "Default: ${DEFAULT-VALUE} MiB.")
    private int maxFileMib;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        if (maxFileMib < 1 || maxFileMib > ManifestReader.MAX_FILE_LIMIT >> 20) {
            err.println("--max-file-size: " + maxFileMib + " is out of range (1-"
                    + (ManifestReader.MAX_FILE_LIMIT >> 20) + " MiB)");
            return EXIT_BAD_INPUT;
        }
        if (!mode.equals("iptables") && !mode.equals("ipvs") && !mode.equals("nftables")) {
            err.println("--mode: '" + mode + "' is not iptables, ipvs or nftables");
            return EXIT_BAD_INPUT;
        }
        if (Service.checkIpvsScheduler(ipvsScheduler) != null) {
            err.println("--ipvs-scheduler: " + Service.checkIpvsScheduler(ipvsScheduler));
            return EXIT_BAD_INPUT;
        }
        if (masqueradeBit < 0 || masqueradeBit > 31) {
            err.println("--masquerade-bit: " + masqueradeBit + " is out of range (0-31)");
            return EXIT_BAD_INPUT;
        }
        ProxySettings settings;
        try {
            IpFamily f = family == null ? IpFamily.IPV4 : family;
            ProxySettings d = ProxySettings.defaults(f);
            settings = new ProxySettings(
                    f,
                    clusterCidrs,
                    masqueradeAll,
                    ProxySettings.markForBit(masqueradeBit),
                    d.localhostNodePorts(),
                    d.randomFully(),
                    nodePortAddresses,
                    d.conntrackTcpBeLiberal());
        } catch (IllegalArgumentException e) {
            err.println("--cluster-cidr: " + e.getMessage());
            return EXIT_BAD_INPUT;
        }
        ClusterState state;
        try {
            state = ClusterManifests.load(paths, (long) maxFileMib << 20);
        } catch (ManifestException e) {
            for (Problem p : e.problems()) {
                err.println(p);
            }
            return EXIT_BAD_INPUT;
        }
        Admission admission = Admission.of(state);
        for (Problem p : admission.problems()) {
            err.println("warning: " + p);
        }
        err.flush();
        state = admission.admit(state);
        String rules;
        try {
            if (mode.equals("ipvs")) {
                IpvsRules ipvs = IpvsCompiler.compile(state, node, settings, ipvsScheduler);
                rules = ipvs.render();
            } else if (mode.equals("nftables")) {
                rules = nftables(state, settings);
            } else {
                rules = IptablesCompiler.compile(state, node, settings).render();
            }
        } catch (UnknownNodeException e) {
            String known = state.nodes().stream().map(Node::name).collect(Collectors.joining(", "));
            err.println("--node: " + e.getMessage()
                    + (known.isEmpty() ? "; the input holds no Nodes" : "; known nodes: " + known));
            return EXIT_BAD_INPUT;
        }
        if (output == null) {
            PrintWriter out = spec.commandLine().getOut();
            out.print(rules);
            out.flush();
            return 0;
        }
        try {
            writeAtomically(output, rules);
        } catch (IOException e) {
            err.println(output + ": cannot write: " + e.getMessage());
            return 1;
        }
        return 0;
    }

    /** The node's table of the family asked for, or of each family it has an address of (a dual-stack node runs both). */
    private String nftables(ClusterState state, ProxySettings settings) throws UnknownNodeException {
        Node n = state.node(node).orElseThrow(() -> new UnknownNodeException(node));
        List<IpFamily> families = family != null
                ? List.of(family)
                : java.util.Arrays.stream(IpFamily.values())
                        .filter(f ->
                                n.addresses().stream().anyMatch(a -> a.address().family() == f))
                        .toList();
        List<NftTransaction> tables = new ArrayList<>();
        for (IpFamily f : families.isEmpty() ? List.of(IpFamily.IPV4) : families) {
            tables.add(NftablesCompiler.compile(state, node, settings.withFamily(f)));
        }
        return NftablesCompiler.renderAll(tables);
    }

    /** A reader of FILE never sees half a rule set. */
    private static void writeAtomically(Path file, String content) throws IOException {
        Path abs = file.toAbsolutePath();
        Path tmp = Files.createTempFile(abs.getParent(), "." + abs.getFileName(), ".tmp");
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    static final class CidrConverter implements ITypeConverter<Cidr> {
        @Override
        public Cidr convert(String value) {
            try {
                return Cidr.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    static final class FamilyConverter implements ITypeConverter<IpFamily> {
        @Override
        public IpFamily convert(String value) {
            try {
                return IpFamily.fromId(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
