package io.rulesync.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.function.Supplier;

/**
 * A bearer token read from a file, and read again when the file changes: a node's ServiceAccount token is renewed by
 * the kubelet (hourly, well before it expires) in the file the agent was given, and the agent sends the new one on its
 * next request or stream without a restart. The token is the file's first line.
 */
public final class TokenFile implements Supplier<String> {
    private final Path file;
    private FileTime seen;
    private String token;

    /** Reads the file now: a missing or empty file is refused at start, naming it. */
    public TokenFile(Path file) {
        this.file = file;
        get();
    }

    @Override
    public synchronized String get() {
        try {
            FileTime modified = Files.getLastModifiedTime(file);
            if (token == null || !modified.equals(seen)) {
                List<String> lines = Files.readAllLines(file);
                if (lines.isEmpty() || lines.get(0).isBlank()) {
                    if (token == null) {
                        throw new IllegalArgumentException(file + ": the first line holds no token");
                    }
                    return token; // being rewritten: the previous token until the new one is there
                }
                token = lines.get(0).strip();
                seen = modified;
            }
            return token;
        } catch (IOException e) {
            if (token != null) {
                return token;
            }
            throw new UncheckedIOException(file + ": " + e.getMessage(), e);
        }
    }
}
