package io.rulesync.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.mode.IptablesMode;
import io.rulesync.agent.state.StateFile;
import io.rulesync.agent.testing.History;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.Table;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.netns.NetnsLab;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's temporary space full, as a node's disk fills: {@code iptables-restore}'s input, written in full before the
 * tool starts, cannot be written. On a real kernel (a network namespace of the test's own) with a real full file system (a
 * 64 KiB tmpfs the test mounts): the apply fails with the reason in a FAILED ack, nothing half-written is left, the kernel
 * keeps the version it held, the agent keeps running and retries after its back-off, and once there is room again the
 * version is applied.
 */
@RequiresNetns
class FullTempSpaceTest {
    @TempDir
    Path dir;

    private NetnsLab lab;
    private Path tmp;
    private boolean mounted;

    @BeforeEach
    void setUp() throws Exception {
        lab = new NetnsLab(0);
        tmp = Files.createDirectories(dir.resolve("tmp"));
        // Mounting needs what creating network namespaces needs (CAP_SYS_ADMIN), which @RequiresNetns checked.
        run("mount", "-t", "tmpfs", "-o", "size=64k", "rulesync-full-tmp", tmp.toString());
        mounted = true;
    }

    @AfterEach
    void tearDown() throws Exception {
        if (mounted) {
            run("umount", tmp.toString());
        }
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void aFullTemporarySpaceFailsTheApplyWithItsReasonAndTheAgentGoesOnOnceThereIsRoom() throws Exception {
        History history = new History(20);
        IptablesNetfilter kernel = new IptablesNetfilter(
                IpFamily.IPV4,
                HostCommand.withInputsIn(tmp).inNetns(lab.nodeNs()),
                IptablesNetfilter.Printer.KERNEL_FORM);
        MutableClock clock = new MutableClock();
        CommandRunner none = (argv, stdin, timeout) -> {
            throw new AssertionError("conntrack in a dry run: " + argv);
        };
        SnapshotSource snapshots = history.snapshots();
        List<NodeAck> acks = new ArrayList<>();
        Agent agent = new Agent(
                History.CLUSTER,
                History.NODE,
                snapshots,
                new IptablesMode(
                        History.NODE,
                        new Applier(List.of(kernel), null, clock),
                        new Conntrack(none, true),
                        Duration.ofSeconds(30),
                        1_000),
                acks::add,
                new StateFile(dir.resolve("state"), History.CLUSTER, History.NODE),
                clock,
                Duration.ofMinutes(10));
        agent.start();
        assertThat(agent.running()).isEqualTo(1);

        Path filler = fill(tmp);
        Random r = new Random(3);
        agent.onDeltas(List.of(history.next(r, 3)));
        NodeAck failed = acks.get(acks.size() - 1);
        assertThat(failed.status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(failed.version()).isEqualTo(2);
        assertThat(failed.running()).as("the node keeps what it ran").isEqualTo(1);
        assertThat(failed.error())
                .contains("cannot run")
                .contains("iptables-restore")
                .contains("No space left on device");
        assertThat(agent.running()).isEqualTo(1);
        assertKernelHolds(kernel, history, 1);
        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left).as("no half-written input kept").containsExactly(filler);
        }

        // Still full: the retry after the back-off fails the same way, and the agent goes on.
        clock.advance(Duration.ofMinutes(1));
        agent.tick();
        assertThat(acks.get(acks.size() - 1).status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(agent.running()).isEqualTo(1);

        Files.delete(filler);
        clock.advance(Duration.ofMinutes(5));
        agent.tick();
        assertThat(acks.get(acks.size() - 1))
                .extracting(NodeAck::version, NodeAck::status)
                .containsExactly(2L, NodeAck.Status.APPLIED);
        assertKernelHolds(kernel, history, 2);
    }

    /** Writes a file into {@code dir} until the file system refuses more; returns it. */
    private static Path fill(Path dir) throws IOException {
        Path filler = dir.resolve("filler");
        byte[] block = new byte[4096];
        try (OutputStream out = Files.newOutputStream(filler)) {
            for (int i = 0; i < 1_000; i++) {
                out.write(block);
                out.flush();
            }
        } catch (IOException full) {
            assertThat(full.getMessage()).contains("No space left on device");
            return filler;
        }
        throw new AssertionError("a 64 KiB tmpfs took 4 MB");
    }

    private static void assertKernelHolds(IptablesNetfilter kernel, History history, long version) {
        for (Table t : Table.values()) {
            for (Chain c : history.rules(version)
                    .ruleSet(History.NODE, IpFamily.IPV4)
                    .orElseThrow()
                    .chains(t)) {
                assertThat(Applier.compare(kernel, t, c))
                        .as("version %d %s %s", version, t, c.name())
                        .isNull();
            }
        }
    }

    private static void run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + out.strip());
        }
    }
}
