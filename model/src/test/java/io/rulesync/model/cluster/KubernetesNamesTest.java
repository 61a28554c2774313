package io.rulesync.model.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class KubernetesNamesTest {
    // The definition checkSubdomain used to apply as a regex; it now reads names by hand.
    private static final Pattern DNS1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    @Test
    void subdomainsAreWhatTheRegexSays() {
        // Every string of up to 6 characters over an alphabet with one of each kind that matters.
        List<String> all = new ArrayList<>(List.of(""));
        for (int length = 1, from = 0; length <= 6; length++) {
            int to = all.size();
            for (int i = from; i < to; i++) {
                for (char c : "a9-.A_".toCharArray()) {
                    all.add(all.get(i) + c);
                }
            }
            from = to;
        }
        for (String s : all) {
            assertThat(KubernetesNames.isSubdomain(s))
                    .as(s)
                    .isEqualTo(DNS1123_SUBDOMAIN.matcher(s).matches());
        }
    }

    @Test
    void subdomainMessages() {
        assertThat(KubernetesNames.checkSubdomain("node-1.zone-a")).isNull();
        assertThat(KubernetesNames.checkSubdomain("")).isEqualTo("must not be empty");
        assertThat(KubernetesNames.checkSubdomain(null)).isEqualTo("must not be empty");
        assertThat(KubernetesNames.checkSubdomain("Node"))
                .isEqualTo("'Node' is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)");
        assertThat(KubernetesNames.checkSubdomain("a".repeat(254))).endsWith("at most 253)");
        assertThat(KubernetesNames.checkSubdomain("a".repeat(253))).isNull();
    }
}
