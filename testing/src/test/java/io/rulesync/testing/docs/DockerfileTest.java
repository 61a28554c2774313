package io.rulesync.testing.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The image's dependency layer is built from the poms alone, so it is only a cache if every module's
 * pom is copied before it: a module left out fails that step, and a failure hidden there would make
 * every source change download the world again.
 */
class DockerfileTest {
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern COPY_POM = Pattern.compile("(?m)^COPY (\\S+)/pom\\.xml \\1/$");

    @Test
    void everyModulesPomIsCopiedBeforeTheDependencyLayerAndNoFailureIsHidden() throws IOException {
        Path root = SelfContainedRepositoryTest.root();
        String dockerfile = Files.readString(root.resolve("Dockerfile"));
        String beforeSources = dockerfile.substring(0, dockerfile.indexOf("COPY . ."));
        List<String> modules = new ArrayList<>();
        Matcher m = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            modules.add(m.group(1));
        }
        List<String> copied = new ArrayList<>();
        Matcher c = COPY_POM.matcher(beforeSources);
        while (c.find()) {
            copied.add(c.group(1));
        }
        assertThat(modules).isNotEmpty();
        assertThat(copied)
                .as("module poms copied before the dependency layer")
                .containsExactlyInAnyOrderElementsOf(modules);
        assertThat(dockerfile).as("a step whose failure is ignored").doesNotContain("|| true");
    }
}
