package io.rulesync.watcher.manifests;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.text.Printable;
import io.rulesync.watcher.publish.ClusterFeed;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;
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
 * <p>Isolation: each source polls on a thread of its own and reads the changed files on a small
 * pool of its own, so a slow file (a large one, or one on a hung network file system) holds up
 * neither the other clusters nor the other files of its cluster. The files changed together are
 * published together when their reads end within {@link #SLOW_READ}; a read that takes longer is
 * left running, its file keeping the objects last read from it, and published when it ends. The
 * first read of the folder waits for every file, so that the first sync markers list all of it.
 * A file larger than the limit ({@code maxFileBytes}) is refused without being read.
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
     * How long the files changed together wait for each other before the ones read are published
     * without the ones still being read. Reading a file of the default limit usually takes a fraction of that.
     */
    static final Duration SLOW_READ = Duration.ofSeconds(1);

    /** Files read at the same time per cluster: one slow file leaves the other reader to the rest. */
    private static final int READERS = 2;

    /** Hands one file's documents on as they are read; {@link ManifestReader#readEach} but for tests that need a slow file. */
    @FunctionalInterface
    interface FileReader {
        void read(Path file, long maxFileBytes, Consumer<ManifestDocument> each) throws ManifestException;
    }

    /**
     * What a poll knows of a file without reading it. File systems keep modification times at a
     * granularity of milliseconds (ext4: a scheduler tick), so two same-size writes in quick
     * succession (port 80 to 81) can leave time and size unchanged; for files modified within the
     * last two seconds the fingerprint therefore also holds a CRC-32 of the content ({@code -1} when
     * not computed).
     */
    private record Fingerprint(FileTime modified, long size, Object fileKey, long crc) {
        boolean sameAs(Fingerprint o) {
            return o != null
                    && modified.equals(o.modified)
                    && size == o.size
                    && Objects.equals(fileKey, o.fileKey)
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
    private record FileState(List<ClusterObject> objects, List<Problem> problems) {}

    private final String cluster;
    private final Path folder;
    private final ClusterFeed feed;
    private final long maxFileBytes;
    private final FileReader reader;
    private final ScheduledExecutorService poller;
    private final ThreadPoolExecutor readers;
    // The state below is the poll thread's alone.
    private Map<Path, Fingerprint> observed;
    /** Per file, the fingerprint its last read was started for (whether it ended or not). */
    private final Map<Path, Fingerprint> requested = new TreeMap<>();
    /** The reads not yet applied; concurrent only so that {@link #reading()} can look at it. */
    private final Map<Path, Future<FileState>> reading = new ConcurrentSkipListMap<>();

    private final Map<Path, FileState> files = new TreeMap<>();
    private boolean folderMissingLogged;
    private volatile long reads;

    private ManifestFolderSource(String cluster, Path folder, ClusterFeed feed, long maxFileBytes, FileReader reader) {
        this.cluster = cluster;
        this.folder = folder;
        this.feed = feed;
        this.maxFileBytes = maxFileBytes;
        this.reader = reader;
        this.poller = Executors.newSingleThreadScheduledExecutor(daemon(() -> "rulesync-folder-" + cluster));
        AtomicInteger n = new AtomicInteger();
        this.readers = new ThreadPoolExecutor(
                READERS,
                READERS,
                30,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                daemon(() -> "rulesync-folder-" + cluster + "-read-" + n.incrementAndGet()));
        this.readers.allowCoreThreadTimeOut(true);
    }

    /**
     * Starts polling the folder on a thread of its own: the first poll reads every file and publishes
     * its objects and markers ({@link #reads()} is then 1), later polls publish the changes. Files
     * larger than {@code maxFileBytes} are refused without being read.
     */
    public static ManifestFolderSource start(
            String cluster, Path folder, ClusterFeed feed, Duration pollInterval, long maxFileBytes) {
        return start(
                cluster,
                folder,
                feed,
                pollInterval,
                maxFileBytes,
                (file, limit, each) -> ManifestReader.readEach(List.of(file), limit, each));
    }

    static ManifestFolderSource start(
            String cluster,
            Path folder,
            ClusterFeed feed,
            Duration pollInterval,
            long maxFileBytes,
            FileReader reader) {
        ManifestFolderSource s = new ManifestFolderSource(cluster, folder, feed, maxFileBytes, reader);
        long ms = pollInterval.toMillis();
        s.poller.scheduleWithFixedDelay(s::pollSafely, 0, ms, TimeUnit.MILLISECONDS);
        return s;
    }

    private static ThreadFactory daemon(Supplier<String> name) {
        return r -> {
            Thread t = new Thread(r, name.get());
            t.setDaemon(true);
            return t;
        };
    }

    /** Completed reads of the folder (each followed by sync markers). */
    public long reads() {
        return reads;
    }

    /** The files whose read has not ended yet (a slow file shows here), in path order. */
    public List<Path> reading() {
        return List.copyOf(reading.keySet());
    }

    private void pollSafely() {
        try {
            poll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing
        } catch (RuntimeException e) {
            log.error("cluster {}: reading {} failed", cluster, folder, e);
        }
    }

    void poll() throws InterruptedException {
        Map<Path, Fingerprint> now;
        try {
            now = scan();
            if (folderMissingLogged) {
                log.info("cluster {}: folder {} is readable again", cluster, folder);
                folderMissingLogged = false;
            }
        } catch (IOException e) {
            if (!folderMissingLogged) {
                log.warn(
                        "cluster {}: cannot list {} ({}); keeping the objects last read",
                        cluster,
                        folder,
                        Printable.escape(e.toString()));
                folderMissingLogged = true;
            }
            return;
        }
        boolean first = observed == null;
        boolean settled = Fingerprint.same(now, observed);
        observed = now;
        boolean changed = first;
        List<Future<FileState>> started = new ArrayList<>();
        if (first || settled) {
            for (Path gone : new ArrayList<>(requested.keySet())) {
                if (!now.containsKey(gone)) {
                    requested.remove(gone);
                    changed |= files.remove(gone) != null; // a read still running for it is dropped when it ends
                }
            }
            for (Map.Entry<Path, Fingerprint> e : now.entrySet()) {
                Path file = e.getKey();
                if (!e.getValue().sameAs(requested.get(file)) && !reading.containsKey(file)) {
                    FileState previous = files.get(file);
                    Future<FileState> f = readers.submit(() -> read(file, previous));
                    reading.put(file, f);
                    requested.put(file, e.getValue());
                    started.add(f);
                }
            }
        }
        // The files changed together are published together, unless one of them is slow; the first
        // read waits for every file, so that its markers do not leave out the objects of a slow one.
        long deadline = System.nanoTime() + SLOW_READ.toNanos();
        for (Future<FileState> f : started) {
            try {
                if (first) {
                    f.get();
                } else {
                    f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
            } catch (ExecutionException | TimeoutException e) {
                // collected below, or at a later poll
            }
        }
        for (Map.Entry<Path, Future<FileState>> r : new ArrayList<>(reading.entrySet())) {
            if (!r.getValue().isDone()) {
                continue;
            }
            Path file = r.getKey();
            reading.remove(file);
            if (!requested.containsKey(file)) {
                continue; // removed while it was read
            }
            try {
                files.put(file, r.getValue().get());
                changed = true;
            } catch (ExecutionException e) {
                log.error("cluster {}: reading {} failed", cluster, file, e.getCause());
                requested.remove(file); // try again at the next settled poll
            }
        }
        if (changed) {
            publish();
            reads++;
        }
    }

    private Map<Path, Fingerprint> scan() throws IOException {
        if (!Files.isDirectory(folder)) {
            throw new IOException("not a folder");
        }
        Map<Path, Fingerprint> out = new TreeMap<>();
        for (Path p : ManifestReader.manifestFiles(folder)) {
            try {
                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                // No checksum for a file over the limit: it is refused by its size, and never read whole.
                boolean recent =
                        a.lastModifiedTime().toInstant().isAfter(Instant.now().minus(RECENT))
                                && a.size() <= maxFileBytes;
                out.put(p, new Fingerprint(a.lastModifiedTime(), a.size(), a.fileKey(), recent ? crc(p) : -1));
            } catch (IOException e) {
                // vanished between listing and reading its attributes: the next poll sees it gone
            }
        }
        return out;
    }

    private static long crc(Path file) throws IOException {
        CRC32 crc = new CRC32();
        try (InputStream in = new CheckedInputStream(Files.newInputStream(file), crc)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return crc.getValue();
    }

    private FileState read(Path file, FileState previous) {
        List<ClusterObject> kept = previous == null ? List.of() : previous.objects();
        List<Problem> problems = new ArrayList<>();
        List<ClusterObject> objects = new ArrayList<>();
        Set<ObjectRef> refs = new HashSet<>();
        try {
            // Decoded as they are read: a file's objects are kept only as typed objects, however large the file.
            reader.read(file, maxFileBytes, doc -> {
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
            });
        } catch (ManifestException e) {
            List<Problem> all = new ArrayList<>(e.problems());
            all.addAll(problems);
            return new FileState(kept, List.copyOf(all));
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
                    duplicates
                            .computeIfAbsent(f.getKey(), k -> new ArrayList<>())
                            .add(new Problem(f.getKey().toString(), ref.toString(), "", "already defined in " + first));
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
            String what = "file " + f.getKey()
                    + (st.problems().isEmpty()
                            ? ""
                            : " is invalid, "
                                    + (st.objects().isEmpty()
                                            ? "it contributes no objects"
                                            : "keeping the " + st.objects().size() + " objects last read from it"))
                    + (dup.isEmpty()
                            ? ""
                            : (st.problems().isEmpty() ? ": " : "; ") + dup.size()
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

    /** Stops polling; a read still running ends on its own (its thread is a daemon) and is not published. */
    @Override
    public void close() {
        poller.shutdownNow();
        readers.shutdownNow();
        try {
            poller.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "cluster " + cluster + " (folder " + folder + ")";
    }
}
