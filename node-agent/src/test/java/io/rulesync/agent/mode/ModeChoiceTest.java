package io.rulesync.agent.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.mode.ModeChoice.WhenIpvsUnavailable;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ModeChoiceTest {
    @Test
    void iptablesModeAndUsableIpvsRunAsAsked() {
        assertThat(ModeChoice.decide(ProxyMode.IPTABLES, Optional.of("no ipvs"), WhenIpvsUnavailable.REFUSE))
                .isEqualTo(ModeChoice.AS_ASKED);
        assertThat(ModeChoice.decide(ProxyMode.IPVS, Optional.empty(), WhenIpvsUnavailable.REFUSE)).isEqualTo(ModeChoice.AS_ASKED);
    }

    @Test
    void unusableIpvsFallsBackOrIsRefusedAndEitherWaySaysWhy() {
        ModeChoice fallback = ModeChoice.decide(ProxyMode.IPVS, Optional.of("Protocol not available"), WhenIpvsUnavailable.FALLBACK);
        assertThat(fallback.note()).isEqualTo("ipvs unavailable: Protocol not available");
        assertThat(fallback.refusal()).isNull();
        ModeChoice refuse = ModeChoice.decide(ProxyMode.IPVS, Optional.of("Protocol not available"), WhenIpvsUnavailable.REFUSE);
        assertThat(refuse.note()).isEqualTo(fallback.note());
        assertThat(refuse.refusal()).isEqualTo("ipvs mode was asked for and cannot be used (Protocol not available); "
                + "refusing to program anything else (--ipvs-unavailable=refuse)");
    }

    @Test
    void optionsAreParsedOrNamed() {
        assertThat(ProxyMode.parse("ipvs")).isEqualTo(ProxyMode.IPVS);
        assertThat(WhenIpvsUnavailable.parse("refuse")).isEqualTo(WhenIpvsUnavailable.REFUSE);
        assertThatThrownBy(() -> ProxyMode.parse("nftables")).hasMessage("--mode: 'nftables' is not iptables or ipvs");
        assertThatThrownBy(() -> WhenIpvsUnavailable.parse("crash")).hasMessage("--ipvs-unavailable: 'crash' is not fallback or refuse");
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
