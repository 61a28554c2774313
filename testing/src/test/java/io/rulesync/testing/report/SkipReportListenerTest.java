package io.rulesync.testing.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.rulesync.testing.needs.RequiresTool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

class SkipReportListenerTest {

    @RequiresTool("rulesync-no-such-tool")
    static class SkippedClass {
        @Test
        void one() {}

        @ParameterizedTest
        @ValueSource(ints = {1, 2, 3})
        void many(int i) {}
    }

    static class SomeSkipped {
        @Test
        void runs() {}

        @Test
        @Disabled("off for now")
        void disabled() {}

        @Test
        void aborted() {
            Assumptions.assumeTrue(false, "no PostgreSQL here");
        }

        @ParameterizedTest
        @ValueSource(ints = {1, 2})
        void abortedTwice(int i) {
            Assumptions.abort("no PostgreSQL here");
        }
    }

    static class NoneSkipped {
        @Test
        void runs() {}
    }

    private static String run(Optional<Path> folder, Class<?>... classes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        // Without auto-registration: this module's own listener must not report these sample runs.
        Launcher launcher = LauncherFactory.create(LauncherConfig.builder()
                .enableTestExecutionListenerAutoRegistration(false)
                .build());
        LauncherDiscoveryRequestBuilder request =
                LauncherDiscoveryRequestBuilder.request().configurationParameter("rulesync.ci", "false");
        for (Class<?> c : classes) {
            request.selectors(selectClass(c));
        }
        launcher.execute(
                request.build(),
                new SkipReportListener("rulesync-sample", folder, new PrintStream(out, true, StandardCharsets.UTF_8)));
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void oneLineCountsEveryKindOfSkipAndASkippedClassCountsItsTests(@TempDir Path dir) throws Exception {
        String line = run(Optional.of(dir), SkippedClass.class, SomeSkipped.class);
        assertThat(line)
                .isEqualTo(
                        "rulesync-sample: skipped 6 tests: 3 × no PostgreSQL here (SkipReportListenerTest.SomeSkipped); "
                                + "2 × needs rulesync-no-such-tool: apt-get install rulesync-no-such-tool (SkipReportListenerTest.SkippedClass); "
                                + "1 × off for now (SkipReportListenerTest.SomeSkipped)\n");

        SkippedTests saved = new SkippedTests();
        saved.load(dir.resolve("rulesync-sample.tsv"));
        assertThat("rulesync-sample: " + saved.summary() + "\n").isEqualTo(line);
    }

    @Test
    void aRunWithoutSkipsOrWithoutTestsSaysSo(@TempDir Path dir) throws Exception {
        assertThat(run(Optional.of(dir), NoneSkipped.class)).isEqualTo("rulesync-sample: skipped nothing\n");
        assertThat(Files.readString(dir.resolve("rulesync-sample.tsv"))).isEmpty();
        assertThat(run(Optional.empty())).isEqualTo("rulesync-sample: skipped nothing\n");
    }
}
