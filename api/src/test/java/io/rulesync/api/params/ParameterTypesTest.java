package io.rulesync.api.params;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.api.ParameterTypes;
import io.rulesync.api.events.Since;
import io.rulesync.api.history.RulesMode;
import io.rulesync.api.nodes.Convergence;
import io.rulesync.model.cluster.IpFamily;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.core.convert.ConversionFailedException;
import org.springframework.format.support.DefaultFormattingConversionService;

/** The conversions the api registers: what each value type takes, and the words of a refusal (the handler puts the name first). */
class ParameterTypesTest {
    private final DefaultFormattingConversionService conversions = new DefaultFormattingConversionService();

    ParameterTypesTest() {
        new ParameterTypes().addFormatters(conversions);
    }

    @Test
    void versionsAreNumbersOrLatest() {
        assertThat(conversions.convert("7", VersionRef.class)).isEqualTo(new VersionRef(7));
        assertThat(conversions.convert("latest", VersionRef.class).resolve(9)).isEqualTo(9);
        assertThat(conversions.convert("latest", VersionRef.class)).hasToString("latest");
        for (String bad : new String[] {"0", "07", "-1", "+1", "1.5", "LATEST", "99999999999999999999", ""}) {
            assertRefused(bad, VersionRef.class, "'" + bad + "' is not a version number (1, 2, ...) or 'latest'");
        }
    }

    @Test
    void namesFollowKubernetesRules() {
        assertThat(conversions.convert("n1.example", DnsSubdomain.class).name()).isEqualTo("n1.example");
        assertRefused("Bad_Node", DnsSubdomain.class, "'Bad_Node' is not a DNS-1123 subdomain");
        assertRefused("", DnsSubdomain.class, "must not be empty");
        assertThat(conversions.convert("shop", DnsLabel.class).name()).isEqualTo("shop");
        assertRefused("a.b", DnsLabel.class, "'a.b' is not a DNS-1123 label");
    }

    @Test
    void instantsModesFamiliesAndStates() {
        assertThat(conversions.convert("2026-11-29T12:00:00Z", Since.class).at())
                .isEqualTo(Instant.parse("2026-11-29T12:00:00Z"));
        assertRefused("yesterday", Since.class, "'yesterday' is not an instant like 2026-11-29T12:00:00Z");
        assertRefused(
                "+10000-01-01T00:00:00Z",
                Since.class,
                "'+10000-01-01T00:00:00Z' is outside the years 0000-9999 (RFC 3339's)");
        assertThat(conversions.convert("ipvs", RulesMode.class)).isEqualTo(RulesMode.IPVS);
        assertRefused("IPVS", RulesMode.class, "'IPVS' is not iptables, ipvs or nftables");
        assertThat(conversions.convert("ipv6", IpFamily.class)).isEqualTo(IpFamily.IPV6);
        assertRefused("ipv5", IpFamily.class, "'ipv5' is not ipv4 or ipv6");
        assertThat(conversions.convert("Behind", Convergence.State.class)).isEqualTo(Convergence.State.BEHIND);
        assertRefused("sleepy", Convergence.State.class, "'sleepy' is not converged, behind, failed or unknown");
    }

    private void assertRefused(String value, Class<?> type, String detail) {
        assertThatThrownBy(() -> conversions.convert(value, type))
                .as(value)
                .isInstanceOf(ConversionFailedException.class)
                .cause()
                .isInstanceOf(BadValue.class)
                .hasMessageStartingWith(detail);
    }
}
