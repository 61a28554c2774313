package io.rulesync.compiler.runtime;

import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** A scripted history of two clusters, as the watcher would publish it, for the service tests. */
final class ScriptedEvents {
    static final Instant T = Fixtures.T;

    private ScriptedEvents() {}

    static String up(String cluster, String yaml) {
        return EventCodec.encode(Fixtures.upsert(cluster, yaml));
    }

    static String node(String cluster, String name, String ip) {
        return up(cluster, Fixtures.node(name, ip));
    }

    static String service(String cluster, String name, String ip) {
        return up(cluster, Fixtures.service(name, ip));
    }

    static String slice(String cluster, String service, String... ips) {
        return up(cluster, Fixtures.slice(service, "n1", ips));
    }

    static String settings(String cluster) {
        return EventCodec.encode(new SettingsChanged(cluster, ClusterSettings.DEFAULT, T));
    }

    static String deleted(String cluster, ObjectKind kind, String key) {
        return EventCodec.encode(new ObjectDeleted(cluster, new ObjectRef(kind, key), "2", T));
    }

    static String sync(String cluster, ObjectKind kind, String... keys) {
        return EventCodec.encode(new SyncMarker(cluster, kind, Set.of(keys), T));
    }

    /** Batches of (key, value) records; offsets follow from their position. */
    static List<List<PartitionProcessor.Record>> batches() {
        List<List<String[]>> script = List.of(
                List.of(
                        kv("a", settings("a")),
                        kv("a", node("a", "n1", "10.1.0.1")),
                        kv("b", settings("b")),
                        kv("a", service("a", "web", "10.96.0.1")),
                        kv("a", slice("a", "web", "10.244.0.1"))),
                List.of(
                        kv("a", slice("a", "web", "10.244.0.1", "10.244.0.2")), kv("b", node("b", "n1", "10.2.0.1")),
                        kv("a", "{not json"), kv("b", service("a", "stray", "10.96.0.9"))),
                List.of(kv("a", node("a", "n1", "10.1.0.1")), kv("b", service("b", "api", "10.96.1.1"))),
                List.of(kv("a", service("a", "db", "10.96.0.5")), kv("a", sync("a", ObjectKind.SERVICE, "shop/web"))),
                List.of(
                        kv("a", deleted("a", ObjectKind.ENDPOINT_SLICE, "shop/web-1")),
                        kv("b", slice("b", "api", "10.244.9.9"))));
        List<List<PartitionProcessor.Record>> out = new ArrayList<>();
        long offset = 0;
        for (List<String[]> batch : script) {
            List<PartitionProcessor.Record> records = new ArrayList<>();
            for (String[] r : batch) {
                records.add(new PartitionProcessor.Record(offset++, r[0], r[1]));
            }
            out.add(records);
        }
        return out;
    }

    private static String[] kv(String key, String value) {
        return new String[] {key, value};
    }
}
