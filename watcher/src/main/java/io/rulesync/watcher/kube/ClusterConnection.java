package io.rulesync.watcher.kube;

import io.fabric8.kubernetes.api.model.NamedContext;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.rulesync.watcher.fleet.ClusterSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** A fabric8 client for a cluster of the fleet file. */
public final class ClusterConnection {
    /**
     * fabric8 waits this long (at least) before relisting after a 410 Gone. {@link KubeClusterSource}
     * notices relists by polling {@code isWatching()} much more often than this, so the wait must not
     * be made shorter by a kubeconfig or system property.
     */
    static final int MIN_WATCH_RECONNECT_INTERVAL_MS = 1000;

    private static final Path SA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    private ClusterConnection() {}

    /** Builds (does not connect) a client; throws {@link IllegalStateException} on unusable configuration. */
    public static KubernetesClient client(String clusterId, ClusterSource source) {
        Config config = config(clusterId, source);
        if (config.getWatchReconnectInterval() < MIN_WATCH_RECONNECT_INTERVAL_MS) {
            config.setWatchReconnectInterval(MIN_WATCH_RECONNECT_INTERVAL_MS);
        }
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    static Config config(String clusterId, ClusterSource source) {
        try {
            if (source instanceof ClusterSource.Kubeconfig k) {
                String context = k.context().orElse(null);
                Config config = k.file().isPresent()
                        ? Config.fromKubeconfig(context, k.file().get().toFile())
                        : Config.autoConfigure(context);
                requireContext(clusterId, k, config);
                return config;
            }
            if (source instanceof ClusterSource.InCluster) {
                return inCluster(clusterId);
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IllegalStateException(
                    "cluster " + clusterId + ": cannot configure the Kubernetes client: " + e.getMessage(), e);
        }
        throw new IllegalArgumentException("cluster " + clusterId + " is not a Kubernetes API server: " + source);
    }

    /**
     * fabric8 quietly falls back to the current context when the named one does not exist; watching
     * another cluster than the fleet file says would be much worse than not starting.
     */
    private static void requireContext(String clusterId, ClusterSource.Kubeconfig k, Config config) {
        if (k.context().isEmpty()) {
            return;
        }
        String wanted = k.context().get();
        NamedContext current = config.getCurrentContext();
        if (current == null || !wanted.equals(current.getName())) {
            List<String> known = config.getContexts() == null
                    ? List.of()
                    : config.getContexts().stream().map(NamedContext::getName).toList();
            throw new IllegalStateException("cluster " + clusterId + ": context: '" + wanted + "' is not in "
                    + k.file().map(f -> "kubeconfig " + f).orElse("the kubeconfig") + " (contexts: "
                    + (known.isEmpty() ? "none" : String.join(", ", known)) + ")");
        }
    }

    /**
     * The pod's service account, explicitly: unlike auto-configuration this ignores any kubeconfig in
     * the image, and re-reads the (rotating) token for every request.
     */
    private static Config inCluster(String clusterId) {
        String host = System.getenv("KUBERNETES_SERVICE_HOST");
        String port = System.getenv("KUBERNETES_SERVICE_PORT");
        if (host == null || port == null) {
            throw new IllegalStateException(
                    "cluster " + clusterId
                            + ": inCluster: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set (not running in a pod?)");
        }
        Path token = SA.resolve("token");
        if (!Files.isReadable(token)) {
            throw new IllegalStateException(
                    "cluster " + clusterId + ": inCluster: no service account token at " + token);
        }
        String hostPort = host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
        return new ConfigBuilder(Config.empty())
                .withMasterUrl("https://" + hostPort)
                .withCaCertFile(SA.resolve("ca.crt").toString())
                .withOauthTokenProvider(() -> {
                    try {
                        return Files.readString(token, StandardCharsets.UTF_8).strip();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .build();
    }
}
