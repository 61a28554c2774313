package io.rulesync.agent.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.KernelListing;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The grammar accepts everything the compiler's golden outputs hold, reading each rule back to a typed
 * rule that writes the same text, and the kernel form is a function of the rule.
 */
class RuleGoldenFilesTest {

    static Stream<RestoreFile> files() {
        return Stream.concat(RestoreFile.golden().stream(), RestoreFile.edgeCases().stream());
    }

    @Test
    void allGoldenCasesAreFound() {
        List<RestoreFile> golden = RestoreFile.golden();
        assertThat(golden).hasSizeGreaterThanOrEqualTo(43);
        assertThat(golden).filteredOn(f -> f.family() == IpFamily.IPV6).hasSize(3);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("files")
    void everyRuleParses(RestoreFile file) {
        int rules = 0;
        for (Map.Entry<Table, List<Chain>> e : file.chains().entrySet()) {
            for (Chain chain : e.getValue()) {
                List<Rule> parsed = RuleGrammar.check(e.getKey(), file.family(), chain);
                assertThat(parsed).hasSameSizeAs(chain.rules());
                assertThat(parsed).extracting(Rule::restoreForm).isEqualTo(chain.rules());
                rules += parsed.size();
            }
        }
        assertThat(rules).isPositive();
        RuleSet set = new RuleSet(
                file.family(),
                file.chains().getOrDefault(Table.FILTER, List.of()),
                file.chains().getOrDefault(Table.NAT, List.of()));
        assertThatCode(() -> RuleGrammar.check(set)).doesNotThrowAnyException();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("files")
    void kernelFormIsDeterministic(RestoreFile file) {
        for (Map.Entry<Table, List<Chain>> e : file.chains().entrySet()) {
            for (Chain chain : e.getValue()) {
                List<String> first = KernelListing.of(e.getKey(), file.family(), chain);
                // A fresh parse of copies of the same text gives the same lines: no hidden state.
                Chain copy = new Chain(
                        new String(chain.name()),
                        chain.rules().stream().map(String::new).toList());
                assertThat(KernelListing.of(e.getKey(), file.family(), copy)).isEqualTo(first);
                List<String> perRule = new ArrayList<>();
                perRule.add("-N " + chain.name());
                for (String body : chain.rules()) {
                    perRule.add(RuleGrammar.parse(e.getKey(), file.family(), chain.name(), body)
                            .kernelForm(file.family(), chain.name()));
                }
                assertThat(perRule).isEqualTo(first);
            }
        }
    }
}
