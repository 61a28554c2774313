package io.rulesync.model.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The chain names rulesync owns: kube-proxy's fixed ones ({@link TopChains}) and a port's own ({@link ServiceChain}). */
class ChainVocabularyTest {
    private static final String HASH = "XPGD46QRK7WJZT7O";

    @ParameterizedTest
    @EnumSource(ServiceChain.class)
    void aServiceChainIsItsPrefixAndAHashAndIsRecognisedAsItsKind(ServiceChain kind) {
        String name = kind.named(HASH);
        assertThat(name)
                .isEqualTo(kind.prefix() + HASH)
                .startsWith("KUBE-")
                .hasSizeLessThanOrEqualTo(TopChains.MAX_NAME_LENGTH);
        assertThat(ServiceChain.of(name)).contains(kind);
        assertThat(Stream.of(ServiceChain.values()).filter(k -> k.names(name))).containsExactly(kind);
    }

    @Test
    void everyFixedChainFitsAndIsNoServiceChain() {
        for (Table table : Table.values()) {
            assertThat(TopChains.of(table)).isNotEmpty().allSatisfy(name -> {
                assertThat(name).hasSizeLessThanOrEqualTo(TopChains.MAX_NAME_LENGTH);
                assertThat(ServiceChain.of(name)).isEmpty();
            });
        }
        assertThat(TopChains.of(Table.FILTER)).contains(TopChains.FIREWALL).doesNotContain(TopChains.MARK_MASQ);
        assertThat(TopChains.of(Table.NAT)).contains(TopChains.MARK_MASQ).doesNotContain(TopChains.FIREWALL);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "KUBE-SVC-XPGD46QRK7WJZT7",
                "KUBE-SVC-XPGD46QRK7WJZT7OA",
                "KUBE-SVC-xPGD46QRK7WJZT7O",
                "KUBE-SVC-XPGD46QRK7WJZT70",
                "KUBE-SVC-XPGD46QRK7WJZT1O",
                "KUBE-XLB-XPGD46QRK7WJZT7O",
                "KUBE-SVCXPGD46QRK7WJZT7O",
                "KUBE-SVC--PGD46QRK7WJZT7O",
                " KUBE-SVC-XPGD46QRK7WJZT7O",
                "KUBE-SERVICES",
                ""
            })
    void anythingElseIsNoServiceChain(String name) {
        assertThat(ServiceChain.of(name)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"XPGD46QRK7WJZT7", "XPGD46QRK7WJZT7O8", "XPGD46QRK7WJZT7=", "xpgd46qrk7wjzt7o", ""})
    void aNameNeedsAHash(String hash) {
        assertThatThrownBy(() -> ServiceChain.SVC.named(hash)).isInstanceOf(IllegalArgumentException.class);
    }
}
