package io.rulesync.compiler.ipvs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rulesync.compiler.iptables.GoldenCase;
import io.rulesync.model.ipvs.IpvsRules;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * Byte-exact IPVS-mode renderings (ipvsadm-restore, ipset restore, iptables-restore, in the sections
 * {@code rulesync compile --mode ipvs} prints), each reviewed against kube-proxy's IPVS proxier; see
 * {@code golden/ipvs/README.md}. Regenerate with {@code -Drulesync.golden.update=true}, then review
 * the diff before committing it.
 */
class IpvsGoldenTest {

    /** What {@code rulesync compile --mode ipvs} prints for a case. */
    static String render(Path dir) throws Exception {
        GoldenCase c = GoldenCase.load(dir);
        Map<?, ?> raw = (Map<?, ?>)
                new Load(LoadSettings.builder().build()).loadFromString(Files.readString(dir.resolve("case.yaml")));
        String scheduler =
                (String) ((Map<String, Object>) raw).getOrDefault("ipvsScheduler", IpvsCompiler.DEFAULT_SCHEDULER);
        IpvsRules r = IpvsCompiler.compile(c.state(), c.node(), c.settings(), scheduler);
        return "######## ipvsadm-restore ########\n" + r.ipvsadmRestore() + "######## ipset restore ########\n"
                + r.ipsetRestore() + "######## iptables-restore --noflush ########\n" + r.iptablesRestore();
    }

    @TestFactory
    Stream<DynamicTest> rendersExactlyTheReviewedOutput() throws Exception {
        boolean update = Boolean.getBoolean("rulesync.golden.update");
        return GoldenCase.folders("ipvs").stream()
                .map(dir -> DynamicTest.dynamicTest(dir.getFileName().toString(), () -> {
                    String actual = render(dir);
                    Path expected = dir.resolve("expected.ipvs");
                    if (update) {
                        Files.writeString(expected, actual);
                    } else {
                        assertEquals(Files.readString(expected), actual, "case " + dir.getFileName());
                    }
                }));
    }
}
