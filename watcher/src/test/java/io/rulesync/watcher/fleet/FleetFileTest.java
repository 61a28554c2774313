package io.rulesync.watcher.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.manifest.Problem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetFileTest {
    @TempDir
    Path dir;

    private Path write(String yaml) throws Exception {
        Path f = dir.resolve("fleet.yaml");
        Files.writeString(f, yaml);
        return f;
    }

    private List<String> problems(String yaml) throws Exception {
        Path f = write(yaml);
        try {
            FleetFile.load(f);
        } catch (FleetException e) {
            return e.problems().stream()
                    .map(Problem::toString)
                    .map(s -> s.replace(f.toString(), "fleet.yaml"))
                    .toList();
        }
        throw new AssertionError("expected the fleet file to be refused");
    }

    @Test
    void readsAllThreeSourceTypesWithSettingsAndDefaults() throws Exception {
        Files.createDirectories(dir.resolve("manifests/demo-a"));
        Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n");
        Path f = write("""
                clusters:
                  - id: prod-eu
                    kubeconfig: kubeconfig
                    context: prod-eu
                    settings: {families: [ipv4, ipv6], clusterCIDRs: [10.244.0.0/16, "fd00:10::/64"], masqueradeAll: true,
                               masqueradeBit: 15, nodePortAddresses: [192.168.0.0/24], ipvsScheduler: wlc}
                  - id: in-cluster
                    inCluster: true
                  - id: auto
                  - id: demo-a
                    manifests: manifests/demo-a
                """);
        FleetConfig fleet = FleetFile.load(f);
        assertThat(fleet.file()).contains(f);
        assertThat(fleet.clusters())
                .extracting(ClusterSpec::id)
                .containsExactly("prod-eu", "in-cluster", "auto", "demo-a");

        ClusterSpec prod = fleet.clusters().get(0);
        assertThat(prod.source())
                .isEqualTo(
                        new ClusterSource.Kubeconfig(Optional.of(dir.resolve("kubeconfig")), Optional.of("prod-eu")));
        assertThat(prod.settings())
                .isEqualTo(new ClusterSettings(
                        List.of(IpFamily.IPV4, IpFamily.IPV6),
                        List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse("fd00:10::/64")),
                        true,
                        15,
                        List.of(Cidr.parse("192.168.0.0/24")),
                        "wlc"));
        assertThat(fleet.clusters().get(1).source()).isEqualTo(new ClusterSource.InCluster());
        assertThat(fleet.clusters().get(2).source())
                .isEqualTo(new ClusterSource.Kubeconfig(Optional.empty(), Optional.empty()));
        assertThat(fleet.clusters().get(2).settings()).isEqualTo(ClusterSettings.DEFAULT);
        assertThat(fleet.clusters().get(3).source())
                .isEqualTo(new ClusterSource.ManifestFolder(dir.resolve("manifests/demo-a")));
    }

    @Test
    void partialSettingsKeepTheOtherDefaults() throws Exception {
        FleetConfig fleet = FleetFile.load(write("""
                clusters:
                  - id: a
                    settings: {masqueradeAll: true}
                """));
        ClusterSettings d = ClusterSettings.DEFAULT;
        assertThat(fleet.clusters().get(0).settings())
                .isEqualTo(new ClusterSettings(
                        d.families(), d.clusterCidrs(), true, d.masqueradeBit(), d.nodePortAddresses()));
    }

    @Test
    void tildeIsTheHomeFolder() throws Exception {
        String home = System.getProperty("user.home");
        Path kubeconfig = Files.createTempFile(Path.of(home), "rulesync-test-", ".kubeconfig");
        try {
            FleetConfig fleet =
                    FleetFile.load(write("clusters: [{id: a, kubeconfig: ~/" + kubeconfig.getFileName() + "}]"));
            assertThat(((ClusterSource.Kubeconfig) fleet.clusters().get(0).source()).file())
                    .contains(kubeconfig);
        } finally {
            Files.deleteIfExists(kubeconfig);
        }
    }

    @Test
    void problemsNameTheFileTheClusterAndTheField() throws Exception {
        Files.createDirectories(dir.resolve("there"));
        assertThat(problems("""
                clusters:
                  - id: prod-eu
                    settings: {masqueradeBit: 40, families: [ipv5], clusterCIDRs: [10.0.0.0/33], masqueradAll: true}
                  - id: Bad_Id
                  - kubeconfig: nowhere
                  - id: demo
                    manifests: missing-folder
                  - id: both
                    manifests: there
                    inCluster: true
                  - id: prod-eu
                  - id: x
                    inCluster: "yes"
                    settings: {nodePortAddresses: 10.0.0.0/8, ipvsScheduler: "rr -j ACCEPT"}
                """))
                .containsExactly(
                        "fleet.yaml: cluster prod-eu: settings.masqueradAll: unknown field (expected one of clusterCIDRs, families, "
                                + "ipvsScheduler, masqueradeAll, masqueradeBit, nodePortAddresses)",
                        "fleet.yaml: cluster prod-eu: settings.families: unknown IP family 'ipv5' (expected ipv4 or ipv6)",
                        "fleet.yaml: cluster prod-eu: settings.clusterCIDRs[0]: '10.0.0.0/33' has an invalid prefix length (0-32)",
                        "fleet.yaml: cluster prod-eu: settings.masqueradeBit: 40 is out of range (0-31)",
                        "fleet.yaml: clusters[1]: id: 'Bad_Id' is not a DNS-1123 label (lower-case letters, digits and '-', at most 63)",
                        "fleet.yaml: clusters[2]: id: is required",
                        "fleet.yaml: clusters[2]: kubeconfig: '" + dir.resolve("nowhere") + "' is not a file",
                        "fleet.yaml: cluster demo: manifests: '" + dir.resolve("missing-folder") + "' is not a folder",
                        "fleet.yaml: cluster both: manifests: a cluster is either a folder of manifests or a Kubernetes API server: "
                                + "remove kubeconfig, context and inCluster, or manifests",
                        "fleet.yaml: cluster prod-eu: id: another cluster has the same id",
                        "fleet.yaml: cluster x: inCluster: expected true or false, found the string \"yes\"",
                        "fleet.yaml: cluster x: settings.nodePortAddresses: expected a list, found the string \"10.0.0.0/8\"",
                        "fleet.yaml: cluster x: settings.ipvsScheduler: 'rr -j ACCEPT' is not an IPVS scheduler (rr, wrr, lc, wlc, lblc, lblcr, sh, "
                                + "dh, sed, nq, mh)");
    }

    @Test
    void theWholeFileMustBeAFleet() throws Exception {
        assertThat(problems("clusters: []"))
                .containsExactly("fleet.yaml: clusters: expected a non-empty list of clusters, found a list");
        assertThat(problems("- id: a"))
                .containsExactly("fleet.yaml: expected a mapping with a 'clusters' list, found a list");
        assertThat(problems("clusters: [{id: a}]\ntopic: x"))
                .containsExactly("fleet.yaml: topic: unknown field (expected one of clusters)");
        assertThat(problems("clusters: [{id: a, id: b}]"))
                .singleElement()
                .asString()
                .startsWith("fleet.yaml: not valid YAML: ")
                .contains("duplicate key id");
        assertThat(problems("clusters:\n  - id: a\n    settings: {families: []}"))
                .containsExactly(
                        "fleet.yaml: cluster a: settings.families: must name at least one IP family (ipv4, ipv6)");
        assertThat(problems("clusters:\n  - id: a\n    settings: {clusterCIDRs: [10.0.0.0/8, 10.1.0.0/16]}"))
                .containsExactly("fleet.yaml: cluster a: settings.clusterCIDRs: at most one CIDR per IP family");
    }

    @Test
    void anUnreadableFileIsAProblemToo() {
        Path missing = dir.resolve("nope.yaml");
        assertThatThrownBy(() -> FleetFile.load(missing))
                .isInstanceOf(FleetException.class)
                .hasMessageStartingWith(missing + ": cannot read: ");
    }
}
