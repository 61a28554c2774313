package io.rulesync.watcher.manifests;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.ManifestReader;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.text.Printable;
import io.rulesync.watcher.publish.ClusterFeed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cluster defined by a folder of manifests (YAML/JSON, read recursively, hidden files skipped, as
 * {@link ManifestReader} does). It produces the same events as a live cluster: upserts for new and
 * changed objects, deletes for vanished ones, a sync marker per kind after every read.
 *
 * <p>Change detection polls the files' modification time, size and file key (plus a checksum for
 * files modified in the last two seconds) every {@code pollInterval} (200 ms by default). A change is applied once the folder has looked the same
 * for one more poll, so a file caught half-written is not published (changes still arrive within
 * about two intervals). Only changed files are re-read.
 *
 * <p>Broken files: a file that cannot be parsed, or holds an invalid object, is reported (logged as one
 * line with every problem, each naming file, object and field, and published as the file's problems:
 * {@link ClusterFeed#report}) and otherwise ignored: the objects last read from it while it was valid
 * stay. A file that is removed takes its objects with it. An object defined in two files is kept from
 * the first file (in path order), and the second file reports it. A file is reported when its problems
 * change (found, different, resolved, or the file removed), not at every read.
 */
public final class ManifestFolderSource implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ManifestFolderSource.class);

    /** Files modified this recently also get a checksum of their content (see {@link Fingerprint}). */
    private static final Duration RECENT = Duration.ofSeconds(2);

    /**
     * What a poll knows of a file without reading it. File systems keep modification times at a
     * granularity of milliseconds (ext4: a scheduler tick), so two same-size writes in quick
     * succession (port 80 to 81) can leave time and size unchanged; for files modified within the
     * last two seconds the fingerprint therefore also holds a CRC-32 of the content ({@code -1} when
     * not computed).
     */
    private record Fingerprint(FileTime modified, long size, Object fileKey, long crc) {
        boolean sameAs(Fingerprint o) {
            return o != null && modified.equals(o.modified) && size == o.size && Objects.equals(fileKey, o.fileKey)
                    && (crc == -1 || o.crc == -1 || crc == o.crc);
        }

        static boolean same(Map<Path, Fingerprint> a, Map<Path, Fingerprint> b) {
            if (a == null || b == null || !a.keySet().equals(b.keySet())) {
                return false;
            }
            return a.entrySet().stream().allMatch(e -> e.getValue().sameAs(b.get(e.getKey())));
        }
    }

    /** What one file contributes: its last valid objects, and what is wrong with it now (nothing when valid). */
    private record FileState(List<ClusterObject> objects, List<Problem> problems) {
    }

    private final String cluster;
    private final Path folder;
    private final ClusterFeed feed;
    private ScheduledFuture<?> poll;
    private Map<Path, Fingerprint> observed;
    private Map<Path, Fingerprint> applied = Map.of();
    private final Map<Path, FileState> files = new TreeMap<>();
    private boolean folderMissingLogged;
    private long reads;

    private ManifestFolderSource(String cluster, Path folder, ClusterFeed feed) {
        this.cluster = cluster;
        this.folder = folder;
        this.feed = feed;
    }

    /** Reads the folder once (publishing its objects and markers), then polls it in the background. */
    public static ManifestFolderSource start(String cluster, Path folder, ClusterFeed feed,
            ScheduledExecutorService scheduler, Duration pollInterval) {
        ManifestFolderSource s = new ManifestFolderSource(cluster, folder, feed);
        s.poll();
        long ms = pollInterval.toMillis();
        s.poll = scheduler.scheduleWithFixedDelay(s::pollSafely, ms, ms, TimeUnit.MILLISECONDS);
        return s;
    }

    /** Completed reads of the folder (each followed by sync markers). */
    public synchronized long reads() {
        return reads;
    }

    private void pollSafely() {
        try {
            poll();
        } catch (RuntimeException e) {
            log.error("cluster {}: reading {} failed", cluster, folder, e);
        }
    }

    synchronized void poll() {
        Map<Path, Fingerprint> now;
        try {
            now = scan();
            if (folderMissingLogged) {
                log.info("cluster {}: folder {} is readable again", cluster, folder);
                folderMissingLogged = false;
            }
        } catch (IOException e) {
            if (!folderMissingLogged) {
                log.warn("cluster {}: cannot list {} ({}); keeping the objects last read", cluster, folder,
                        Printable.escape(e.toString()));
                folderMissingLogged = true;
            }
            return;
        }
        boolean first = observed == null;
        boolean settled = Fingerprint.same(now, observed);
        observed = now;
        if (!first && (!settled || Fingerprint.same(now, applied))) {
            return;
        }
        for (Path gone : applied.keySet()) {
            if (!now.containsKey(gone)) {
                files.remove(gone);
            }
        }
        for (Map.Entry<Path, Fingerprint> e : now.entrySet()) {
            if (!e.getValue().sameAs(applied.get(e.getKey()))) {
                files.put(e.getKey(), read(e.getKey(), files.get(e.getKey())));
            }
        }
        applied = now;
        publish();
        reads++;
    }

    private Map<Path, Fingerprint> scan() throws IOException {
        if (!Files.isDirectory(folder)) {
            throw new IOException("not a folder");
        }
        Map<Path, Fingerprint> out = new TreeMap<>();
        for (Path p : ManifestReader.manifestFiles(folder)) {
            try {
                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                boolean recent = a.lastModifiedTime().toInstant().isAfter(Instant.now().minus(RECENT));
                out.put(p, new Fingerprint(a.lastModifiedTime(), a.size(), a.fileKey(), recent ? crc(p) : -1));
            } catch (IOException e) {
                // vanished between listing and reading its attributes: the next poll sees it gone
            }
        }
        return out;
    }

    private static long crc(Path file) throws IOException {
        CRC32 crc = new CRC32();
        crc.update(Files.readAllBytes(file));
        return crc.getValue();
    }

    private FileState read(Path file, FileState previous) {
        List<ClusterObject> kept = previous == null ? List.of() : previous.objects();
        List<ManifestDocument> docs;
        try {
            docs = ManifestReader.read(List.of(file));
        } catch (ManifestException e) {
            return new FileState(kept, e.problems());
        }
        List<Problem> problems = new ArrayList<>();
        List<ClusterObject> objects = new ArrayList<>();
        Set<ObjectRef> refs = new HashSet<>();
        for (ManifestDocument doc : docs) {
            Decoded d = ManifestDecoder.decode(doc);
            if (d instanceof Decoded.Accepted a) {
                ObjectRef ref = ObjectRef.of(a.object());
                if (refs.add(ref)) {
                    objects.add(a.object());
                } else {
                    problems.add(new Problem(doc.source(), ref.toString(), "", "defined twice in this file"));
                }
            } else if (d instanceof Decoded.Rejected r) {
                problems.addAll(r.problems());
            }
        }
        if (!problems.isEmpty()) {
            return new FileState(kept, List.copyOf(problems));
        }
        return new FileState(List.copyOf(objects), List.of());
    }

    /**
     * Publishes the union of all files' objects: each file's problems (reported only when they changed),
     * deletes for vanished keys, upserts, then markers.
     */
    private void publish() {
        Map<ObjectRef, ClusterObject> union = new LinkedHashMap<>();
        Map<ObjectRef, Path> origin = new TreeMap<>();
        Map<Path, List<Problem>> duplicates = new TreeMap<>();
        for (Map.Entry<Path, FileState> f : files.entrySet()) {
            for (ClusterObject o : f.getValue().objects()) {
                ObjectRef ref = ObjectRef.of(o);
                Path first = origin.putIfAbsent(ref, f.getKey());
                if (first == null) {
                    union.put(ref, o);
                } else {
                    duplicates.computeIfAbsent(f.getKey(), k -> new ArrayList<>()).add(new Problem(f.getKey().toString(),
                            ref.toString(), "", "already defined in " + first));
                }
            }
        }
        reportProblems(duplicates);
        for (ObjectKind kind : ObjectKind.values()) {
            for (String key : feed.keys(kind)) {
                if (!union.containsKey(new ObjectRef(kind, key))) {
                    feed.delete(kind, key, "");
                }
            }
        }
        for (ClusterObject o : union.values()) {
            feed.upsert(o, "");
        }
        for (ObjectKind kind : ObjectKind.values()) {
            feed.sync(kind);
        }
    }

    /** Every file's problems, its own and objects it repeats from an earlier file; files gone, or fine, have none. */
    private void reportProblems(Map<Path, List<Problem>> duplicates) {
        Set<String> sources = new HashSet<>();
        for (Map.Entry<Path, FileState> f : files.entrySet()) {
            FileState st = f.getValue();
            List<Problem> dup = duplicates.getOrDefault(f.getKey(), List.of());
            List<Problem> all = new ArrayList<>(st.problems());
            all.addAll(dup);
            String what = "file " + f.getKey() + (st.problems().isEmpty() ? "" : " is invalid, " + (st.objects().isEmpty()
                    ? "it contributes no objects" : "keeping the " + st.objects().size() + " objects last read from it"))
                    + (dup.isEmpty() ? "" : (st.problems().isEmpty() ? ": " : "; ") + dup.size()
                    + " object(s) already defined in an earlier file are ignored");
            feed.report(f.getKey().toString(), what, all);
            sources.add(ClusterFeed.sourceName(f.getKey().toString()));
        }
        for (String gone : feed.reportedSources()) {
            if (!sources.contains(gone)) {
                feed.report(gone, "file " + gone + " is gone", List.of());
            }
        }
    }

    @Override
    public synchronized void close() {
        if (poll != null) {
            poll.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "cluster " + cluster + " (folder " + folder + ")";
    }
}
