package io.rulesync.model.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.manifest.Problem;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProblemsReportedTest {
    private static final Instant T = Instant.parse("2026-11-29T17:00:00Z");

    @Test
    void aProblemPrintsOnOneLineWhateverItHolds() {
        Problem p = new Problem(
                "shop/a\nb.yaml (document 1)", "Service shop/web\nINFO forged", "spec.ports[0].name", "bad \u001b[2J");
        assertThat(p.toString())
                .doesNotContain("\n")
                .doesNotContain("\u001b")
                .isEqualTo(
                        "shop/a\\x0ab.yaml (document 1): Service shop/web\\x0aINFO forged: spec.ports[0].name: bad \\x1b[2J");
    }

    @Test
    void ofEscapesEveryTextSoThatTheReportCanTravelAndBeLogged() {
        ProblemsReported r =
                ProblemsReported.of("shop", "dir/a\nb.yaml", List.of(new Problem("dir/a\nb.yaml", "", "", "x\ty")), T);
        assertThat(r.source()).isEqualTo("dir/a\\x0ab.yaml");
        assertThat(r.problems()).containsExactly(new Problem("dir/a\\x0ab.yaml", "", "", "x\\x09y"));
        assertThatThrownBy(() -> new ProblemsReported("shop", "a\nb", List.of(), T))
                .hasMessage("source: contains control characters");
    }

    @Test
    void ofKeepsTheFirstProblemsAndSaysHowManyMoreThereWere() {
        List<Problem> many = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            many.add(
                    new Problem("big.yaml", "Service shop/s" + i, "spec.ports[0].port", "0 is out of range (1-65535)"));
        }
        ProblemsReported r = ProblemsReported.of("shop", "big.yaml", many, T);
        assertThat(r.problems()).hasSize(ProblemsReported.MAX_PROBLEMS);
        assertThat(r.problems().get(98).object()).isEqualTo("Service shop/s98");
        assertThat(r.problems().get(99)).isEqualTo(new Problem("big.yaml", "", "", "and 151 more problems"));
        assertThat(r.refusedObjects()).isEqualTo(100);
    }

    @Test
    void ofCutsLongTexts() {
        String huge = "x".repeat(5000);
        ProblemsReported r = ProblemsReported.of("shop", huge, List.of(new Problem("", "", "", huge)), T);
        assertThat(r.source()).hasSize(ProblemsReported.MAX_TEXT).endsWith("x…");
        assertThat(r.problems().get(0).message()).hasSize(ProblemsReported.MAX_TEXT);
    }

    @Test
    void refusedObjectsCountsDistinctObjectsOfAReport() {
        ProblemsReported r = ProblemsReported.of(
                "shop",
                "a.yaml",
                List.of(
                        new Problem(
                                "a.yaml (document 1)",
                                "Service shop/web",
                                "spec.ports[0].port",
                                "0 is out of range (1-65535)"),
                        new Problem(
                                "a.yaml (document 1)",
                                "Service shop/web",
                                "spec.clusterIP",
                                "'x' is not an IP address"),
                        new Problem("a.yaml (document 2)", "Node n1", "metadata.name", "must not be empty")),
                T);
        assertThat(r.refusedObjects()).isEqualTo(2);
        assertThat(ProblemsReported.of("shop", "a.yaml", List.of(), T).cleared())
                .isTrue();
    }

    @Test
    void aFingerprintCoversSourceAndProblemsButNotTheTime() {
        ProblemsReported a = ProblemsReported.of("shop", "a.yaml", List.of(new Problem("a.yaml", "", "", "m")), T);
        assertThat(Fingerprint.of(a))
                .isEqualTo(Fingerprint.of(ProblemsReported.of("shop", "a.yaml", a.problems(), T.plusSeconds(60))))
                .isNotEqualTo(Fingerprint.of(ProblemsReported.of("shop", "b.yaml", a.problems(), T)))
                .isNotEqualTo(Fingerprint.of(
                        ProblemsReported.of("shop", "a.yaml", List.of(new Problem("a.yaml", "", "", "n")), T)));
    }
}
