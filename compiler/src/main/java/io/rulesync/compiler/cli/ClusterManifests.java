package io.rulesync.compiler.cli;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.ManifestObjects;
import io.rulesync.model.manifest.Problem;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A cluster described by manifest files: reads and decodes every object, and refuses the whole input
 * when anything is wrong (an unparsable file, an invalid field, the same object defined twice), so
 * that rules are never compiled from a partial picture.
 */
public final class ClusterManifests {
    private ClusterManifests() {}

    public static ClusterState load(List<Path> paths) throws ManifestException {
        return load(paths, ManifestReader.DEFAULT_MAX_FILE_BYTES);
    }

    /**
     * {@link #load(List)} with another limit on the size of a file (bytes). Each object is decoded as it is read, so
     * what the files hold is kept only as typed objects.
     */
    public static ClusterState load(List<Path> paths, long maxFileBytes) throws ManifestException {
        ManifestObjects objects = new ManifestObjects();
        try {
            ManifestReader.readEach(paths, maxFileBytes, objects);
        } catch (ManifestException e) {
            List<Problem> all = new ArrayList<>(e.problems());
            all.addAll(objects.problems());
            throw new ManifestException(all);
        }
        return objects.state();
    }

    public static ClusterState fromDocuments(List<ManifestDocument> docs) throws ManifestException {
        ManifestObjects objects = new ManifestObjects();
        docs.forEach(objects);
        return objects.state();
    }
}
