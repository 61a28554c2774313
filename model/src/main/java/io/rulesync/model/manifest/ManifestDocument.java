package io.rulesync.model.manifest;

import java.util.Map;

/**
 * One Kubernetes object as parsed from a file, before decoding: its generic JSON shape and where it
 * came from ({@code path (document 2)} or {@code path (document 1, items[3])} for {@code kind: List}).
 */
public record ManifestDocument(String source, Map<String, Object> content) {
    public ManifestDocument {
        content = content == null ? Map.of() : content;
    }
}
