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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Node streams: the gRPC server beside the REST api, and what it serves. */
@Configuration(proxyBeanMethods = false)
public class NodeStreamConfiguration {

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

    /** Streams that fell behind are ended once a second. */
    @Bean(destroyMethod = "shutdownNow")
    ScheduledExecutorService streamSweeps(NodeStreams streams) {
        ScheduledExecutorService sweeps = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "stream-sweeps");
            t.setDaemon(true);
            return t;
        });
        sweeps.scheduleWithFixedDelay(streams::sweep, 1, 1, TimeUnit.SECONDS);
        return sweeps;
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
