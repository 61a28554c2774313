package io.rulesync.compiler.iptables;

import io.rulesync.compiler.cli.ClusterManifests;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.files.ManifestReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * A golden test case folder: {@code manifests.yaml} (the cluster), {@code case.yaml} (node and
 * kube-proxy settings) and {@code expected.iptables}.
 */
public record GoldenCase(Path dir, String node, ProxySettings settings, ClusterState state, String expected) {

    public static final Path ROOT = Path.of("src/test/resources/golden");

    public static List<Path> folders(String group) throws IOException {
        try (Stream<Path> s = Files.list(ROOT.resolve(group))) {
            return s.filter(Files::isDirectory)
                    .filter(p -> !p.getFileName().toString().startsWith("_"))
                    .filter(p -> Files.exists(p.resolve("case.yaml")))
                    .sorted()
                    .toList();
        }
    }

    @SuppressWarnings("unchecked")
    public static GoldenCase load(Path dir) throws Exception {
        Map<String, Object> c = (Map<String, Object>)
                new Load(LoadSettings.builder().build()).loadFromString(Files.readString(dir.resolve("case.yaml")));
        IpFamily family = IpFamily.fromId((String) c.getOrDefault("ipFamily", "ipv4"));
        ProxySettings d = ProxySettings.defaults(family);
        ProxySettings settings = new ProxySettings(
                family,
                cidrs(c.get("clusterCIDRs")),
                (Boolean) c.getOrDefault("masqueradeAll", d.masqueradeAll()),
                (String) c.getOrDefault("masqueradeMark", d.masqueradeMark()),
                (Boolean) c.getOrDefault("localhostNodePorts", d.localhostNodePorts()),
                (Boolean) c.getOrDefault("randomFully", d.randomFully()),
                cidrs(c.get("nodePortAddresses")),
                (Boolean) c.getOrDefault("conntrackTcpBeLiberal", d.conntrackTcpBeLiberal()));
        ClusterState state =
                ClusterManifests.fromDocuments(ManifestReader.read(List.of(dir.resolve("manifests.yaml"))));
        Path expected = dir.resolve("expected.iptables");
        return new GoldenCase(
                dir,
                (String) c.get("node"),
                settings,
                state,
                Files.exists(expected) ? Files.readString(expected) : null);
    }

    private static List<Cidr> cidrs(Object o) {
        if (o == null) {
            return List.of();
        }
        return ((List<?>) o).stream().map(x -> Cidr.parse((String) x)).toList();
    }

    String compile() throws UnknownNodeException {
        return IptablesCompiler.compile(state, node, settings).render();
    }
}
