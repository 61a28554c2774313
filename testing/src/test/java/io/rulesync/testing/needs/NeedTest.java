package io.rulesync.testing.needs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** What helpers get when they call {@link Need#require()} from a test's body: the same policy as the annotations. */
class NeedTest {
    private static final Need IPVSADM = new Need("ipvsadm", Optional.of("apt-get install ipvsadm"), true);
    private static final Need IPVS =
            new Need("a kernel with IPVS", Optional.of("this kernel has none, and no install brings it"), false);

    @Test
    void aMissingNeedAbortsTheTestOrUnderCiFailsIt() {
        assertThatThrownBy(() -> IPVSADM.require(false))
                .isExactlyInstanceOf(TestAbortedException.class)
                .hasMessage("needs ipvsadm: apt-get install ipvsadm");
        assertThatThrownBy(() -> IPVSADM.require(true))
                .isExactlyInstanceOf(AssertionFailedError.class)
                .hasMessage("needs ipvsadm: apt-get install ipvsadm");
    }

    @Test
    void whatNoInstallBringsIsASkipEvenUnderCi() {
        assertThatThrownBy(() -> IPVS.require(true))
                .isExactlyInstanceOf(TestAbortedException.class)
                .hasMessage("needs a kernel with IPVS: this kernel has none, and no install brings it");
    }

    @Test
    void aMetNeedLetsTheTestGoOn() {
        assertThatCode(() -> new Need("sh", Optional.empty(), true).require(true))
                .doesNotThrowAnyException();
    }

    @Test
    void toolsAreLookedUpAndTheirPackageNamed() {
        assertThat(Need.tool("sh").met()).isTrue();
        assertThat(Need.tool("rulesync-no-such-tool").message())
                .isEqualTo("needs rulesync-no-such-tool: apt-get install rulesync-no-such-tool");
        assertThat(Tools.debianPackage("ip")).isEqualTo("iproute2");
        assertThat(Tools.debianPackage("ip6tables-restore")).isEqualTo("iptables");
        assertThat(Tools.debianPackage("conntrack")).isEqualTo("conntrack");
        assertThat(Tools.install("redocly")).isEqualTo("npm install -g @redocly/cli@2.77.0");
        assertThat(Tools.install("promtool")).isEqualTo("apt-get install prometheus");
    }
}
