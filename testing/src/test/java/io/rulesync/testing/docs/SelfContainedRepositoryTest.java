package io.rulesync.testing.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Whoever clones the repository has only the repository: no file may point outside it. Markdown links
 * must resolve to a file inside it, no file may name the notes folder a build machine keeps beside
 * the checkout, and none may cite our own tracker's issue numbers.
 */
class SelfContainedRepositoryTest {
    private static final Pattern MARKDOWN_LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    /** The folder of reference notes beside a checkout on the team's machines: not part of the repository. */
    private static final String NOTES = "shared" + "/reference"; // split, so that this file does not name it

    private static final Pattern OUTSIDE_NOTES =
            Pattern.compile("\\.\\./shared/|" + NOTES + "|(?i)the shared " + "reference");
    /**
     * Our own tracker's numbers (the word issue and a number) mean nothing to a reader of the repository; another project's, named with
     * it ("grpc-java issue 12958"), do.
     */
    private static final Pattern OWN_ISSUE =
            Pattern.compile("(?i)(?<![\\w.]{2}[-/][\\w.-]{1,30} )\\bissues? #?\\d+\\b");

    private static final Set<String> SKIPPED_DIRS = Set.of(".git", "target", "node_modules", ".idea");
    private static final Set<String> TEXT = Set.of(
            "md",
            "java",
            "yaml",
            "yml",
            "xml",
            "sh",
            "properties",
            "json",
            "txt",
            "sql",
            "html",
            "js",
            "css",
            "iptables",
            "nft");

    @Test
    void noFileReferencesAnythingOutsideTheRepository() throws IOException {
        Path root = root();
        List<String> found = new ArrayList<>();
        List<Path> read;
        try (Stream<Path> files = Files.walk(root)) {
            read = files.filter(p -> isText(root, p)).toList();
        }
        for (Path f : read) {
            found.addAll(outsideReferences(root, f, Files.readString(f, StandardCharsets.UTF_8)));
        }
        assertThat(read)
                .as("the docs were read")
                .contains(root.resolve("README.md"), root.resolve("ARCHITECTURE.md"), root.resolve("Dockerfile"));
        assertThat(found).as("references to outside the repository").isEmpty();
    }

    @Test
    void theCheckFindsWhatItLooksFor() {
        Path root = Path.of("/repo");
        Path readme = root.resolve("docs/README.md");
        assertThat(outsideReferences(
                        root, readme, "see [facts](../../" + NOTES + "/facts.md) and [x](../../../etc/passwd)"))
                .hasSize(3);
        assertThat(outsideReferences(root, readme, "[ok](https://example.org/a) [anchor](#modes) [mail](mailto:a@b)"))
                .isEmpty();
        assertThat(outsideReferences(root, root.resolve("Foo.java"), "// from kube-proxy-facts in ../" + NOTES))
                .hasSize(1);
        assertThat(outsideReferences(root, root.resolve("Foo.java"), "// as The shared " + "reference measured"))
                .hasSize(1);
        assertThat(outsideReferences(
                        root, root.resolve("Foo.java"), "// the probe (iss" + "ue 13); Iss" + "ues 4 and 5"))
                .hasSize(2);
        assertThat(outsideReferences(root, root.resolve("Foo.java"), "// grpc-java issue 12958, see the issue tracker"))
                .isEmpty();
    }

    /** What in {@code text} (the content of {@code file}) points outside {@code root}: each as "file: what". */
    static List<String> outsideReferences(Path root, Path file, String text) {
        List<String> out = new ArrayList<>();
        String where = root.relativize(file).toString();
        Matcher notes = OUTSIDE_NOTES.matcher(text);
        while (notes.find()) {
            out.add(where + ": names " + notes.group());
        }
        // Applied migrations are history: Flyway checks their checksums, so their comments stay as written.
        Matcher issue = OWN_ISSUE.matcher(where.contains("db/migration/") ? "" : text);
        while (issue.find()) {
            out.add(where + ": names " + issue.group() + " of a tracker the reader does not have");
        }
        if (file.toString().endsWith(".md")) {
            Matcher m = MARKDOWN_LINK.matcher(text);
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-z]+:.*") || target.startsWith("#")) {
                    continue;
                }
                int anchor = target.indexOf('#');
                Path resolved = file.getParent()
                        .resolve(anchor < 0 ? target : target.substring(0, anchor))
                        .normalize();
                if (!resolved.startsWith(root)) {
                    out.add(where + ": links " + target + ", outside the repository");
                } else if (root.getFileSystem() == file.getFileSystem()
                        && Files.isDirectory(root)
                        && !Files.exists(resolved)) {
                    out.add(where + ": links " + target + ", which does not exist");
                }
            }
        }
        return out;
    }

    private static boolean isText(Path root, Path p) {
        for (Path part : root.relativize(p)) {
            if (SKIPPED_DIRS.contains(part.toString())) {
                return false;
            }
        }
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        boolean text =
                dot > 0 ? TEXT.contains(name.substring(dot + 1)) : name.equals("Dockerfile") || isScript(root, p);
        try {
            return text && Files.isRegularFile(p) && Files.size(p) < 4_000_000;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isScript(Path root, Path p) {
        Path rel = root.relativize(p);
        return rel.getNameCount() == 2
                        && (rel.startsWith("bench") || rel.startsWith(".ci") || rel.startsWith("rulesync"))
                || rel.toString().equals("rulesync");
    }

    /** The checkout: the nearest directory above the module that holds the root pom and the README. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null
                && !(Files.exists(dir.resolve("README.md")) && Files.exists(dir.resolve("ARCHITECTURE.md")))) {
            dir = dir.getParent();
        }
        assertThat(dir)
                .as("the repository's root above " + Path.of("").toAbsolutePath())
                .isNotNull();
        return dir;
    }
}
