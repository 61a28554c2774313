package io.rulesync.watcher.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.rulesync.watcher.fleet.ClusterSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

class ClusterConnectionTest {
    @TempDir
    Path dir;

    private Path kubeconfig() throws Exception {
        Path f = dir.resolve("kubeconfig");
        Files.writeString(f, """
                apiVersion: v1
                kind: Config
                clusters:
                - {name: one, cluster: {server: "https://one.example:6443"}}
                - {name: two, cluster: {server: "https://two.example:6443"}}
                users:
                - {name: u, user: {token: t}}
                contexts:
                - {name: one, context: {cluster: one, user: u}}
                - {name: two, context: {cluster: two, user: u}}
                current-context: one
                """);
        return f;
    }

    @Test
    void theNamedContextOrTheCurrentOne() throws Exception {
        Path f = kubeconfig();
        try (KubernetesClient c =
                ClusterConnection.client("a", new ClusterSource.Kubeconfig(Optional.of(f), Optional.of("two")))) {
            assertThat(c.getMasterUrl()).hasToString("https://two.example:6443/");
            assertThat(c.getConfiguration().getWatchReconnectInterval()).isGreaterThanOrEqualTo(1000);
        }
        try (KubernetesClient c =
                ClusterConnection.client("a", new ClusterSource.Kubeconfig(Optional.of(f), Optional.empty()))) {
            assertThat(c.getMasterUrl()).hasToString("https://one.example:6443/");
        }
    }

    @Test
    void anUnknownContextIsAnErrorNotTheCurrentContext() throws Exception {
        Path f = kubeconfig();
        assertThatThrownBy(() -> ClusterConnection.client(
                        "prod-eu", new ClusterSource.Kubeconfig(Optional.of(f), Optional.of("three"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("cluster prod-eu: context: 'three' is not in kubeconfig " + f + " (contexts: one, two)");
    }

    @Test
    @DisabledIfEnvironmentVariable(
            named = "KUBERNETES_SERVICE_HOST",
            matches = ".*",
            disabledReason = "runs in a pod, where in-cluster configuration is there: this checks its absence")
    void inClusterOutsideAPodSaysSo() {
        assertThatThrownBy(() -> ClusterConnection.client("local", new ClusterSource.InCluster()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "cluster local: inCluster: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set");
    }
}
