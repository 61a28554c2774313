package io.rulesync.testing.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SkippedTestsTest {
    private static final String IPVS = "needs a kernel with IPVS: this kernel has none, and no install brings it";

    @Test
    void nothingSkippedSaysSo() {
        assertThat(new SkippedTests().summary()).isEqualTo("skipped nothing");
    }

    @Test
    void skipsAreGroupedByReasonMostFirstWithTheirClasses() {
        SkippedTests s = new SkippedTests();
        s.add("needs ipset: apt-get install ipset", "IpsetSyncNamespaceTest", 5);
        s.add(IPVS, "IpvsKernelTest", 1);
        s.add(IPVS, "IpvsadmKernelNamespaceTest", 2);
        s.add("needs ipset: apt-get install ipset", "IpvsKernelTest", 2);
        assertThat(s.summary())
                .isEqualTo(
                        "skipped 10 tests: 7 × needs ipset: apt-get install ipset (IpsetSyncNamespaceTest, IpvsKernelTest); "
                                + "3 × " + IPVS + " (IpvsKernelTest, IpvsadmKernelNamespaceTest)");
    }

    @Test
    void oneTestIsOneTestAndLongListsOfClassesAreCut() {
        SkippedTests one = new SkippedTests();
        one.add("off\nsecond line", "A", 1);
        assertThat(one.summary()).isEqualTo("skipped 1 test: 1 × off (A)");

        SkippedTests many = new SkippedTests();
        for (String c : new String[] {"H", "G", "F", "E", "D", "C", "B", "A"}) {
            many.add("why", c, 1);
        }
        assertThat(many.summary()).isEqualTo("skipped 8 tests: 8 × why (A, B, C, D, E, F and 2 more)");
    }

    @Test
    void modulesAddUp(@TempDir Path dir) {
        SkippedTests compiler = new SkippedTests();
        compiler.add(IPVS, "IpvsKernelTest", 1);
        compiler.save(dir.resolve("compiler.tsv"));
        SkippedTests agent = new SkippedTests();
        agent.add(IPVS, "IpvsadmKernelNamespaceTest", 2);
        agent.save(dir.resolve("agent.tsv"));
        new SkippedTests().save(dir.resolve("model.tsv"));

        SkippedTests build = new SkippedTests();
        build.load(dir.resolve("compiler.tsv"));
        build.load(dir.resolve("agent.tsv"));
        build.load(dir.resolve("model.tsv"));
        assertThat(build.summary())
                .isEqualTo("skipped 3 tests: 3 × " + IPVS + " (IpvsKernelTest, IpvsadmKernelNamespaceTest)");
    }
}
