package io.rulesync.api.stream;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.ApiProperties;
import io.rulesync.api.access.Authentication;
import io.rulesync.api.access.Credentials;
import io.rulesync.api.acks.AckVersions;
import io.rulesync.api.acks.AckWriter;
import io.rulesync.api.deltas.DeltaWaits;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/** Node streams: the gRPC server beside the REST api, and what it serves. */
@Configuration(proxyBeanMethods = false)
public class NodeStreamConfiguration implements SchedulingConfigurer {
    private final ObjectProvider<NodeStreams> streams;

    public NodeStreamConfiguration(ObjectProvider<NodeStreams> streams) {
        this.streams = streams;
    }

    @Bean
    NodeStreams nodeStreams(
            DeltaWaits waits,
            AckWriter acks,
            AckVersions versions,
            @Qualifier("deltaWakers") ExecutorService deltaWakers,
            ApiProperties p,
            MeterRegistry meters) {
        return new NodeStreams(waits, acks, versions, deltaWakers, p.maxStreams(), p.maxFallBehind(), meters);
    }

    /** Streams that fell behind are ended once a second, on Spring's scheduler. */
    @Override
    public void configureTasks(ScheduledTaskRegistrar tasks) {
        tasks.addFixedDelayTask(
                new FixedDelayTask(() -> streams.getObject().sweep(), Duration.ofSeconds(1), Duration.ofSeconds(1)));
    }

    @Bean
    NodeStreamServer nodeStreamServer(
            NodeStreams streams,
            Credentials credentials,
            Authentication authentication,
            ApiProperties p,
            @Value("${server.address:#{null}}") String address) {
        StreamAccess access = new StreamAccess(authentication);
        credentials.onChange(() -> streams.recheck(credentials));
        InetSocketAddress at = address == null
                ? new InetSocketAddress(p.streamPort())
                : new InetSocketAddress(address, p.streamPort());
        NodeStreamServer.Tls tls =
                p.tlsCert() == null ? null : new NodeStreamServer.Tls(Path.of(p.tlsCert()), Path.of(p.tlsKey()));
        return new NodeStreamServer(at, streams, access, tls);
    }
}
