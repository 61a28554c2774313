package io.rulesync.agent.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ModeChoiceTest {
    @Test
    void iptablesModeAndUsableIpvsRunAsAsked() {
        assertThat(ModeChoice.decide(ProxyMode.IPTABLES, Optional.of("no ipvs"), WhenUnavailable.REFUSE))
                .isEqualTo(ModeChoice.AS_ASKED);
        assertThat(ModeChoice.decide(ProxyMode.IPVS, Optional.empty(), WhenUnavailable.REFUSE))
                .isEqualTo(ModeChoice.AS_ASKED);
    }

    @Test
    void unusableIpvsFallsBackOrIsRefusedAndEitherWaySaysWhy() {
        ModeChoice fallback =
                ModeChoice.decide(ProxyMode.IPVS, Optional.of("Protocol not available"), WhenUnavailable.FALLBACK);
        assertThat(fallback.note()).isEqualTo("ipvs unavailable: Protocol not available");
        assertThat(fallback.refusal()).isNull();
        ModeChoice refuse =
                ModeChoice.decide(ProxyMode.IPVS, Optional.of("Protocol not available"), WhenUnavailable.REFUSE);
        assertThat(refuse.note()).isEqualTo(fallback.note());
        assertThat(refuse.refusal())
                .isEqualTo("ipvs mode was asked for and cannot be used (Protocol not available); "
                        + "refusing to program anything else (--mode-unavailable=refuse)");
    }

    @Test
    void optionsAreParsedOrNamed() {
        assertThat(ProxyMode.parse("ipvs")).isEqualTo(ProxyMode.IPVS);
        assertThat(WhenUnavailable.parse("refuse")).isEqualTo(WhenUnavailable.REFUSE);
        assertThat(ProxyMode.parse("nftables")).isEqualTo(ProxyMode.NFTABLES);
        assertThatThrownBy(() -> ProxyMode.parse("ebpf")).hasMessage("'ebpf' is not iptables, ipvs or nftables");
        assertThatThrownBy(() -> WhenUnavailable.parse("crash")).hasMessage("'crash' is not fallback or refuse");
    }

    @Test
    void unusableNftablesIsSaidTheSameWay() {
        ModeChoice refuse = ModeChoice.decide(
                ProxyMode.NFTABLES, Optional.of("nft 0.9.8 is older than 1.0.1"), WhenUnavailable.REFUSE);
        assertThat(refuse.note()).isEqualTo("nftables unavailable: nft 0.9.8 is older than 1.0.1");
        assertThat(refuse.refusal())
                .startsWith("nftables mode was asked for and cannot be used (nft 0.9.8 is older than 1.0.1)");
    }

    @Test
    void nftMustBeOneDotZeroDotOneOrNewer() {
        assertThat(NftProbe.versionProblem("nftables v1.0.6 (Lester Gooch #5)")).isEmpty();
        assertThat(NftProbe.versionProblem("nftables v1.0.1 (Fearless Fosdick #3)"))
                .isEmpty();
        assertThat(NftProbe.versionProblem("nftables v1.0.0 (Fearless Fosdick)"))
                .contains("nft 1.0.0 is older than 1.0.1");
        assertThat(NftProbe.versionProblem("nftables v0.9.8 (E.D.S.)")).contains("nft 0.9.8 is older than 1.0.1");
        assertThat(NftProbe.versionProblem("nft: command not found").orElseThrow())
                .startsWith("cannot tell the nft version");
    }

    @Test
    void ipsetMustBeSixOrNewer() {
        assertThat(IpvsProbe.ipsetProblem("ipset v7.17, protocol version: 7")).isEmpty();
        assertThat(IpvsProbe.ipsetProblem("ipset v6.0, protocol version: 6")).isEmpty();
        assertThat(IpvsProbe.ipsetProblem("ipset v5.4.1, protocol version: 5")).contains("ipset 5.4 is older than 6.0");
        assertThat(IpvsProbe.ipsetProblem("modprobe: FATAL: Module ip_set not found\nsomething else\nsecond line"))
                .contains("cannot tell the ipset version from 'something else; second line'");
    }
}
