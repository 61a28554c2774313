package io.rulesync.compiler.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Our output against the expected outputs of kube-proxy's own unit tests (proxier_test.go, v1.30
 * era): the same objects and settings, compared after kube-proxy's own normalisation, which only
 * undoes the random order in which Go visits services. Sources and notes per case are in
 * {@code golden/kube-proxy/README.md}.
 */
class KubeProxyConformanceTest {

    @TestFactory
    Stream<DynamicTest> matchesKubeProxyTestExpectations() throws Exception {
        return GoldenCase.folders("kube-proxy").stream()
                .map(dir -> DynamicTest.dynamicTest(dir.getFileName().toString(), () -> {
                    GoldenCase c = GoldenCase.load(dir);
                    assertEquals(
                            KubeProxyDump.normalize(c.expected()),
                            KubeProxyDump.normalize(c.compile()),
                            "case " + dir.getFileName());
                }));
    }

    /** The normaliser itself, checked against kube-proxy's tests of sortIPTablesRules. */
    @TestFactory
    Stream<DynamicTest> normalisesLikeKubeProxy() throws Exception {
        Path root = GoldenCase.ROOT.resolve("kube-proxy/_sort-iptables-rules");
        return Files.list(root)
                .sorted()
                .map(dir -> DynamicTest.dynamicTest(
                        dir.getFileName().toString(),
                        () -> assertThat(KubeProxyDump.normalize(Files.readString(dir.resolve("input.iptables"))))
                                .isEqualTo(Files.readString(dir.resolve("output.iptables")))));
    }
}
