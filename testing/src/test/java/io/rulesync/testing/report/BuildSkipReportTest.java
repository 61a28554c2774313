package io.rulesync.testing.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BuildSkipReportTest {
    private static final Instant START = Instant.parse("2026-01-01T10:00:00Z");

    @Test
    void modulesTestedInThisBuildAddUpAndOlderReportsAreLeftOut(@TempDir Path dir) throws Exception {
        report(dir, "rulesync-compiler", "why", START.plusSeconds(30));
        report(dir, "rulesync-node-agent", "why", START.plusSeconds(90));
        report(dir, "rulesync-api", "stale reason", START.minusSeconds(3600)); // from an earlier build
        Files.writeString(dir.resolve("rulesync-model.tsv"), "");
        Files.setLastModifiedTime(dir.resolve("rulesync-model.tsv"), FileTime.from(START.plusSeconds(10)));

        assertThat(BuildSkipReport.line(dir, START))
                .hasValue("all 3 tested modules: skipped 2 tests: 2 × why (rulesync-compiler, rulesync-node-agent)");
    }

    @Test
    void aBuildThatTestedNothingPrintsNothing(@TempDir Path dir) throws Exception {
        assertThat(BuildSkipReport.line(dir.resolve("absent"), START)).isEmpty();
        report(dir, "rulesync-api", "stale", START.minusSeconds(1));
        assertThat(BuildSkipReport.line(dir, START)).isEmpty();
    }

    /** A module's report holding one skip, whose class is named after the module. */
    private static void report(Path dir, String module, String reason, Instant written) throws Exception {
        SkippedTests s = new SkippedTests();
        s.add(reason, module, 1);
        Path f = dir.resolve(module + ".tsv");
        s.save(f);
        Files.setLastModifiedTime(f, FileTime.from(written));
    }
}
