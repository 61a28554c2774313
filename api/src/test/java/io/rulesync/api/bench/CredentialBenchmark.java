package io.rulesync.api.bench;

import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.NodeIssuers;
import io.rulesync.api.access.Role;
import io.rulesync.api.testing.NodeTokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What checking a node's credential costs the api, once per stream opened (and again when the credentials change) or per
 * REST request: an api token among 5,000 (SHA-256 and a lookup), and a projected ServiceAccount token verified offline,
 * signed as Kubernetes signs by default (RS256, a 2,048-bit key) or with ES256.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class CredentialBenchmark {
    private ApiTokens tokens;
    private String token;
    private NodeIssuers rsa;
    private String rsaToken;
    private NodeIssuers ec;
    private String ecToken;
    private final Clock clock = Clock.systemUTC();
    private Path dir;

    @Setup
    public void setUp() throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            ApiTokens.Issued t = ApiTokens.issue("node-" + i, Role.AGENT, new ApiTokens.Scope("shop", "node-" + i));
            lines.add(t.line());
            token = t.token();
        }
        tokens = ApiTokens.parse(lines, "bench");

        dir = Files.createTempDirectory("rulesync-credential-bench");
        NodeTokens rs = NodeTokens.rs256("https://rsa.example");
        rs.writeJwks(dir.resolve("rsa.jwks.json"));
        Files.writeString(dir.resolve("rsa.txt"), "shop https://rsa.example rsa.jwks.json\n");
        rsa = NodeIssuers.read(dir.resolve("rsa.txt"));
        rsaToken = rs.forNode("node-1");

        NodeTokens es = NodeTokens.es256("https://ec.example");
        es.writeJwks(dir.resolve("ec.jwks.json"));
        Files.writeString(dir.resolve("ec.txt"), "shop https://ec.example ec.jwks.json\n");
        ec = NodeIssuers.read(dir.resolve("ec.txt"));
        ecToken = es.forNode("node-1");
        if (rsa.verify(rsaToken, clock).caller() == null
                || ec.verify(ecToken, clock).caller() == null
                || tokens.authenticate(token).isEmpty()) {
            throw new IllegalStateException("a credential the benchmark made is refused");
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(dir);
    }

    @Benchmark
    public Object apiTokenAmong5000() {
        return tokens.authenticate(token);
    }

    @Benchmark
    public Object serviceAccountTokenRs256() {
        return rsa.verify(rsaToken, clock);
    }

    @Benchmark
    public Object serviceAccountTokenEs256() {
        return ec.verify(ecToken, clock);
    }
}
