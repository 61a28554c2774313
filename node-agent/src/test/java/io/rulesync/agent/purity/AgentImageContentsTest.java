package io.rulesync.agent.purity;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's image holds the agent and what it needs: its jar and the runtime class path Maven resolves for it (the
 * same scope the build copies into {@code target/lib}, and the Dockerfile into the image). Nothing of the Kafka broker,
 * of an embedded or any PostgreSQL, or of the central roles may be on it: every node would carry them, and load them
 * if anything reached for them.
 */
class AgentImageContentsTest {
    /**
     * Class and resource prefixes that mark what the node must not carry, with what each is. The broker's Scala classes
     * live in {@code kafka.*}; Kafka's clients keep only a version file there.
     */
    private static final List<String[]> FORBIDDEN = List.of(
            new String[] {"kafka/server/", "the Kafka broker (kafka_2.13)"},
            new String[] {"kafka/log/", "the Kafka broker's log (kafka_2.13)"},
            new String[] {"org/apache/kafka/raft/", "the Kafka broker's KRaft quorum"},
            new String[] {"org/apache/kafka/controller/", "the Kafka broker's controller"},
            new String[] {"org/apache/kafka/metadata/", "the Kafka broker's metadata"},
            new String[] {"org/apache/kafka/storage/", "the Kafka broker's log storage"},
            new String[] {"io/zonky/", "embedded PostgreSQL"},
            new String[] {"postgres-linux", "embedded PostgreSQL's binaries"},
            new String[] {"org/postgresql/", "the PostgreSQL driver"},
            new String[] {"org/flywaydb/", "the schema's migrations"},
            new String[] {"org/springframework/", "Spring (the central roles' framework)"},
            new String[] {"io/rulesync/api/", "the api"},
            new String[] {"io/rulesync/compiler/", "the compiler"},
            new String[] {"io/rulesync/watcher/", "the watcher"},
            new String[] {"io/rulesync/store/", "the store"},
            new String[] {"io/rulesync/demo/", "the demo"});

    @Test
    void theAgentsRuntimeClassPathHoldsNoBrokerDatabaseOrCentralRole() throws IOException {
        Path file = Path.of("target/runtime-class-path.txt");
        assertThat(file)
                .as("written by the build (maven-dependency-plugin's build-classpath, at generate-test-resources)")
                .exists();
        List<Path> classPath = Arrays.stream(Files.readString(file).strip().split(java.io.File.pathSeparator))
                .filter(s -> !s.isBlank())
                .map(Path::of)
                .toList();
        assertThat(classPath).as("the agent's libraries").isNotEmpty();
        List<String> found = new ArrayList<>();
        for (Path entry : classPath) {
            found.addAll(forbiddenIn(entry));
        }
        found.addAll(forbiddenIn(Path.of("target/classes")));
        assertThat(found).as("what the agent's image would carry and must not").isEmpty();
    }

    /**
     * The check finds what it looks for: the broker's jar (which only this module's tests have) is refused, and so is a
     * jar holding embedded PostgreSQL's classes.
     */
    @Test
    void theCheckFindsTheBrokerAndAnEmbeddedDatabase(@TempDir Path dir) throws Exception {
        assertThat(forbiddenIn(jarOf("kafka.server.KafkaRaftServer")))
                .anyMatch(s -> s.contains("the Kafka broker (kafka_2.13)"));
        Path embedded = dir.resolve("embedded.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(embedded))) {
            out.putNextEntry(new JarEntry("io/zonky/test/db/postgres/embedded/EmbeddedPostgres.class"));
            out.closeEntry();
        }
        assertThat(forbiddenIn(embedded))
                .containsExactly("embedded.jar: embedded PostgreSQL "
                        + "(io/zonky/test/db/postgres/embedded/EmbeddedPostgres.class)");
        assertThat(forbiddenIn(jarOf("org.apache.kafka.clients.consumer.KafkaConsumer")))
                .as("Kafka's clients, which the agent's Kafka feed uses")
                .isEmpty();
    }

    private static Path jarOf(String className) throws ClassNotFoundException, URISyntaxException {
        return Path.of(Class.forName(className, false, AgentImageContentsTest.class.getClassLoader())
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    }

    /** One line per forbidden prefix found in a jar or class directory: where, what, and one entry as an example. */
    static List<String> forbiddenIn(Path entry) {
        List<String> names;
        try {
            if (Files.isDirectory(entry)) {
                try (Stream<Path> walk = Files.walk(entry)) {
                    names = walk.filter(Files::isRegularFile)
                            .map(p -> entry.relativize(p).toString().replace('\\', '/'))
                            .toList();
                }
            } else {
                try (JarFile jar = new JarFile(entry.toFile())) {
                    names = jar.stream().map(e -> e.getName()).toList();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(entry.toString(), e);
        }
        List<String> found = new ArrayList<>();
        for (String[] f : FORBIDDEN) {
            names.stream()
                    .filter(n -> n.startsWith(f[0]))
                    .findFirst()
                    .ifPresent(n -> found.add(entry.getFileName() + ": " + f[1] + " (" + n + ")"));
        }
        return found;
    }
}
