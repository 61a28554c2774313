package io.rulesync.compiler.iptables;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Byte-exact expected outputs for cases kube-proxy's own tests do not dump (merged slices,
 * selectorless Services, headless/ExternalName, dual stack, zone hints, ipMode Proxy, masquerade-all
 * with NodePort addresses). Each expected file was reviewed rule by rule against kube-proxy v1.30's
 * syncProxyRules; see {@code golden/rulesync/README.md}. To regenerate after an intended change, run
 * with {@code -Drulesync.golden.update=true} and review the diff before committing it.
 */
class RulesyncGoldenTest {

    @TestFactory
    Stream<DynamicTest> rendersExactlyTheReviewedOutput() throws Exception {
        boolean update = Boolean.getBoolean("rulesync.golden.update");
        return GoldenCase.folders("rulesync").stream()
                .map(dir -> DynamicTest.dynamicTest(dir.getFileName().toString(), () -> {
                    GoldenCase c = GoldenCase.load(dir);
                    String actual = c.compile();
                    if (update) {
                        Files.writeString(dir.resolve("expected.iptables"), actual);
                    } else {
                        assertEquals(c.expected(), actual, "case " + dir.getFileName());
                    }
                }));
    }
}
