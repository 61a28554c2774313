package io.rulesync.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;

/** A secret kept in a file (a database password, a webhook's signing secret): its first line. */
public final class SecretFile {
    private SecretFile() {}

    /**
     * The first line of {@code file}: refused when every user of the machine may read the file (as libpq ignores such a
     * {@code .pgpass}), or when it holds nothing. The group may: Kubernetes gives a secret's files to the pod's
     * {@code fsGroup}. The message says what is wrong, for the caller to prefix with the option and file.
     */
    public static String read(Path file) {
        try {
            if (readableByAll(file)) {
                throw new IllegalArgumentException("every user of this machine may read it; chmod o-r it (600 or 640)");
            }
            List<String> lines = Files.readAllLines(file);
            if (lines.isEmpty() || lines.get(0).isEmpty()) {
                throw new IllegalArgumentException("holds no secret on its first line");
            }
            return lines.get(0);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "cannot be read (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
        }
    }

    private static boolean readableByAll(Path file) throws IOException {
        try {
            return Files.getPosixFilePermissions(file).contains(PosixFilePermission.OTHERS_READ);
        } catch (UnsupportedOperationException notPosix) {
            return false; // no such mode to check where the file system has none
        }
    }
}
