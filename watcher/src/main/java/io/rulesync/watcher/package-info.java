/**
 * The watcher role: for every cluster of a fleet, watch Services, EndpointSlices and Nodes (with
 * fabric8 informers, or by polling a folder of manifests) and publish each change as a
 * {@link io.rulesync.model.event.ClusterEvent} on Kafka, keyed by cluster id.
 *
 * <p>{@link io.rulesync.watcher.Watcher} is the entry point for embedding; the packages are:
 * <ul>
 *   <li>{@code fleet}: the fleet file (which clusters, how to reach them, their proxy settings);</li>
 *   <li>{@code kube}: informers and the translation of fabric8 objects into model objects;</li>
 *   <li>{@code manifests}: the folder-of-manifests source;</li>
 *   <li>{@code publish}: per-cluster views (no-op suppression, sync markers), the conflating pending
 *       queue and the Kafka sink;</li>
 *   <li>{@code cli}: the {@code watcher} subcommand.</li>
 * </ul>
 */
package io.rulesync.watcher;
