package io.rulesync.compiler.testing;

import io.rulesync.compiler.runtime.CompilerApplication;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.topic.Topics;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The compiler service as tests start it: its own database, topics and consumer groups, the shared broker. */
public final class TestCompiler {
    private TestCompiler() {}

    /** Starts the compiler on {@code db} with these topics; {@code run} makes its consumer groups unique. */
    public static ConfigurableApplicationContext start(TestDatabase db, Topics topics, String run) {
        return start(db, topics, run, Map.of());
    }

    /**
     * {@link #start(TestDatabase, Topics, String)} with more {@code rulesync.compiler.*} (or other) properties, which
     * override the compiler's defaults.
     */
    public static ConfigurableApplicationContext start(
            TestDatabase db, Topics topics, String run, Map<String, Object> more) {
        return start(db.url(), db.user(), db.password(), topics, run, more);
    }

    /** {@link #start(TestDatabase, Topics, String, Map)} with {@code faults} injected into its partitions' processors. */
    public static ConfigurableApplicationContext start(
            TestDatabase db, Topics topics, String run, Map<String, Object> more, PartitionProcessor.Faults faults) {
        return start(db.url(), db.user(), db.password(), topics, run, more, faults);
    }

    /** The compiler on the database at {@code url} (a server of the test's own), as above. */
    public static ConfigurableApplicationContext start(
            String url, String user, String password, Topics topics, String run, Map<String, Object> more) {
        return start(url, user, password, topics, run, more, PartitionProcessor.Faults.NONE);
    }

    private static ConfigurableApplicationContext start(
            String url,
            String user,
            String password,
            Topics topics,
            String run,
            Map<String, Object> more,
            PartitionProcessor.Faults faults) {
        Map<String, Object> props = new HashMap<>();
        props.put("spring.datasource.url", url);
        props.put("spring.datasource.username", user);
        props.put("spring.datasource.password", password);
        props.put("spring.kafka.bootstrap-servers", TestInfrastructure.kafkaBootstrapServers());
        props.put("rulesync.compiler.events-topic", topics.events());
        props.put("rulesync.compiler.deltas-topic", topics.deltas());
        props.put("rulesync.compiler.dead-letter-topic", topics.deadLetters());
        props.put("rulesync.compiler.resync-topic", topics.resyncs());
        props.put("rulesync.compiler.group", "compiler-" + run);
        props.put("rulesync.compiler.partitions", 2);
        props.put("spring.main.banner-mode", "off");
        // The builder's properties rank below the compiler's defaults file: more is given as command-line options.
        String[] args = more.entrySet().stream()
                .map(e -> "--" + e.getKey() + "=" + e.getValue())
                .toArray(String[]::new);
        return new SpringApplicationBuilder(CompilerApplication.class)
                .web(WebApplicationType.NONE)
                .properties(props)
                .initializers(context -> context.getBeanFactory().registerSingleton("faults", faults))
                .run(args);
    }
}
