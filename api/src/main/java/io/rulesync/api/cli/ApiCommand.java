package io.rulesync.api.cli;

import io.rulesync.api.ApiApplication;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import io.rulesync.compiler.cli.DatabaseOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code rulesync api}: the HTTP api over the compiler's PostgreSQL. */
@Command(
        name = "api",
        description = "Serve the stored versions over HTTP under /api/v1/clusters/CLUSTER: versions, versions/V, "
                + "versions/V/rules?node=N, versions/V|latest/snapshot?node=N, nodes.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class ApiCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ApiCommand.class);

    @Option(names = "--port", defaultValue = "8080", description = "HTTP port (0: any free one). Default: ${DEFAULT-VALUE}.")
    private int port;

    @Mixin
    private DatabaseOptions db;

    /** Starts the api and returns once it serves; closing the context stops it. */
    public ConfigurableApplicationContext start() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("server.port", port);
        props.putAll(db.springProperties());
        props.put("spring.main.banner-mode", "off");
        ConfigurableApplicationContext app = new SpringApplicationBuilder(ApiApplication.class)
                .web(WebApplicationType.SERVLET).properties(props).run();
        log.info("api serving on port {}", app.getEnvironment().getProperty("local.server.port"));
        return app;
    }

    @Override
    public Integer call() throws InterruptedException {
        ConfigurableApplicationContext app = start();
        CountDownLatch closed = new CountDownLatch(1);
        app.addApplicationListener(e -> {
            if (e instanceof ContextClosedEvent) {
                closed.countDown();
            }
        });
        closed.await(); // until SIGTERM/SIGINT closes the context through Spring's shutdown hook
        return 0;
    }
}
