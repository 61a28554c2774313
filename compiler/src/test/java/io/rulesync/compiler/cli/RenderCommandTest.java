package io.rulesync.compiler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** A version stored by the compiler, rendered back from PostgreSQL, is what compiling that node gives. */
@RequiresPostgres
class RenderCommandTest {
    @Test
    void rendersAStoredVersionExactlyAsCompiled() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = new PartitionProcessor(
                    store.partition(),
                    Topics.DEFAULT,
                    "g",
                    0,
                    Clock.systemUTC(),
                    PartitionProcessor.Faults.NONE,
                    PartitionProcessor.VersionListener.NONE);
            List<PartitionProcessor.Record> records = new ArrayList<>();
            records.add(new PartitionProcessor.Record(
                    0,
                    "shop",
                    EventCodec.encode(
                            new ClusterEvent.SettingsChanged("shop", ClusterSettings.DEFAULT, Instant.now()))));
            for (ManifestDocument doc : ManifestReader.read(List.of(Path.of("../examples/shop")))) {
                ManifestDecoder.Decoded d = ManifestDecoder.decode(doc);
                if (d instanceof ManifestDecoder.Decoded.Accepted a) {
                    records.add(new PartitionProcessor.Record(
                            records.size(),
                            "shop",
                            EventCodec.encode(
                                    new ClusterEvent.ObjectUpserted("shop", a.object(), "1", Instant.now()))));
                }
            }
            p.process(records);

            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cmd = new CommandLine(new RenderCommand())
                    .setOut(new PrintWriter(out))
                    .setErr(new PrintWriter(err));
            int exit = cmd.execute(args(db, "--cluster", "shop", "--node", "node-a"));
            assertThat(exit).isZero();
            ClusterState state = ClusterManifests.load(List.of(Path.of("../examples/shop")));
            assertThat(out.toString())
                    .isEqualTo(IptablesCompiler.compile(
                                    state,
                                    "node-a",
                                    ClusterCompiler.proxySettings(
                                            ClusterSettings.DEFAULT, io.rulesync.model.cluster.IpFamily.IPV4))
                            .render());

            assertThat(cmd.execute(args(db, "--cluster", "shop", "--node", "node-z")))
                    .isEqualTo(2);
            assertThat(cmd.execute(args(db, "--cluster", "shop", "--node", "node-a", "--version", "7")))
                    .isEqualTo(2);
            assertThat(err.toString())
                    .contains("'node-z' is not a node of shop")
                    .contains("has versions 1-1");
        }
    }

    private static String[] args(TestDatabase db, String... more) {
        List<String> args = new ArrayList<>(List.of("--db-url", db.url(), "--db-user", db.user()));
        args.addAll(db.passwordOptions());
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }
}
