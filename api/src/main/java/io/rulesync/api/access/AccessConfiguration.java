package io.rulesync.api.access;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.ApiProperties;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Who may call the api: the configured credentials (read again every {@code credentials-check}), one authentication for
 * REST and node streams, the bearer-token filter with the routes' {@link Access}, and the rate limits.
 */
@Configuration(proxyBeanMethods = false)
public class AccessConfiguration implements SchedulingConfigurer {
    private final ObjectProvider<Credentials> credentials;
    private final ApiProperties properties;

    public AccessConfiguration(ObjectProvider<Credentials> credentials, ApiProperties properties) {
        this.credentials = credentials;
        this.properties = properties;
    }

    /**
     * The configured credentials: api tokens (the file's lines, then the inline ones) and node issuers. The api does not
     * start without a token. The files are read again every {@code credentials-check}: a revoked token is refused, and
     * its streams ended, within that much time.
     */
    @Bean
    Credentials credentials(MeterRegistry meters) throws IOException {
        ApiProperties p = properties;
        Credentials c = new Credentials(
                p.tokensFile() == null || p.tokensFile().isBlank() ? null : Path.of(p.tokensFile()),
                p.tokens(),
                p.nodeIssuers() == null || p.nodeIssuers().isBlank() ? null : Path.of(p.nodeIssuers()),
                Clock.systemUTC(),
                meters);
        for (String name : c.tokens().unboundAgents()) {
            LoggerFactory.getLogger(AccessConfiguration.class)
                    .warn(
                            "api token '{}' (agent) is bound to no cluster: a node holding it can "
                                    + "read every cluster's rules, and acknowledge for none; give each node its own credential ('rulesync token "
                                    + "--role agent --cluster ID --node NAME', or its ServiceAccount token with --node-issuers)",
                            name);
        }
        return c;
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar tasks) {
        Duration every = properties.credentialsCheck();
        tasks.addFixedDelayTask(new FixedDelayTask(() -> credentials.getObject().reload(), every, every));
    }

    @Bean
    WhoAmIController whoAmIController() {
        return new WhoAmIController();
    }

    /** 1 while the api serves plain HTTP on a non-loopback address, as it was told to ({@code --insecure-http}). */
    @Bean
    Gauge insecureHttp(MeterRegistry meters) {
        return Gauge.builder("rulesync.api.insecure.http", () -> properties.insecureHttp() ? 1 : 0)
                .description("1: the api serves plain HTTP on a non-loopback address (--insecure-http)")
                .register(meters);
    }

    /**
     * One authentication for the REST endpoints and the node streams: failed ones are logged at most once a minute per
     * remote address, with the count left out.
     */
    @Bean
    Authentication authentication(Credentials credentials, RateLimits limits, MeterRegistry meters) {
        return new Authentication(
                credentials,
                limits,
                new FailedAuthentications(Duration.ofMinutes(1), 10_000, Clock.systemUTC()),
                meters);
    }

    /**
     * Every request through the bearer-token filter, after the body limits: a body too big is refused before anything
     * else is done for it. The routes' access is read from the handler mappings at the first request, once they exist.
     */
    @Bean
    FilterRegistrationBean<BearerTokenFilter> bearerTokenFilter(
            Authentication authentication,
            RateLimits limits,
            @Qualifier("requestMappingHandlerMapping") ObjectProvider<RequestMappingHandlerMapping> mvc) {
        FilterRegistrationBean<BearerTokenFilter> r = new FilterRegistrationBean<>(new BearerTokenFilter(
                authentication,
                limits,
                SingletonSupplier.of(() -> AccessRules.of(mvc.getObject().getHandlerMethods()))));
        r.addUrlPatterns("/*");
        r.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        return r;
    }

    @Bean
    RateLimits rateLimits(MeterRegistry meters) {
        return new RateLimits(properties.writesPerSecond(), properties.failedAuthenticationsPerMinute(), meters);
    }
}
