package io.rulesync.watcher.fleet;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/** Where a cluster's objects come from. */
public sealed interface ClusterSource {
    /**
     * A Kubernetes API server reached through a kubeconfig. Without a file, fabric8's usual
     * auto-configuration applies ({@code KUBECONFIG}, {@code ~/.kube/config}, then the pod's service
     * account); without a context, the file's current context.
     */
    record Kubeconfig(Optional<Path> file, Optional<String> context) implements ClusterSource {
        public Kubeconfig {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(context, "context");
        }
    }

    /** The API server of the cluster this process runs in, with the pod's service account. */
    record InCluster() implements ClusterSource {}

    /** A folder of YAML/JSON manifests, re-read when its files change. */
    record ManifestFolder(Path folder) implements ClusterSource {
        public ManifestFolder {
            Objects.requireNonNull(folder, "folder");
        }
    }
}
