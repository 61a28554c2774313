package io.rulesync.api.testing;

import io.rulesync.api.ApiApplication;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Credentials;
import io.rulesync.api.access.Role;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.testsupport.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.assertj.core.api.Assertions;
import org.postgresql.ds.PGSimpleDataSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The api as tests run it: on a test database of its own, on a free port, spoken to over real HTTP,
 * with one fresh token per role ({@link #get} uses the viewer's).
 */
public final class TestApi implements AutoCloseable {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    public static final ApiTokens.Issued VIEWER = ApiTokens.issue("vera", Role.VIEWER);
    public static final ApiTokens.Issued OPERATOR = ApiTokens.issue("otto", Role.OPERATOR);
    public static final ApiTokens.Issued AGENT = ApiTokens.issue("node-agent", Role.AGENT);
    /** An agent token bound to node n1 of cluster shop. */
    public static final ApiTokens.Issued SHOP_N1 =
            ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1"));

    /** An agent token bound to cluster bank (any of its nodes). */
    public static final ApiTokens.Issued BANK =
            ApiTokens.issue("bank-agents", Role.AGENT, new ApiTokens.Scope("bank", null));

    /** Spring properties that configure the tokens. */
    public static String tokenProperty() {
        return String.join(",", VIEWER.line(), OPERATOR.line(), AGENT.line(), SHOP_N1.line(), BANK.line());
    }

    /** Null when the caller owns the database ({@link #on}). */
    private final TestDatabase db;

    private final CompilerStores store;
    private final ConfigurableApplicationContext app;
    private final String base;
    private final Map<String, String> nodeTokens = new java.util.HashMap<>();

    private TestApi(TestDatabase db, CompilerStores store, ConfigurableApplicationContext app) {
        this.db = db;
        this.store = store;
        this.app = app;
        this.base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    /**
     * A database of its own holding {@link StoredClusters#twoVersions} of each cluster, and the api
     * on it. Tests that use it declare {@code @RequiresPostgres}.
     */
    public static TestApi onTwoVersions(String... clusters) throws Exception {
        TestDatabase db = TestDatabase.create();
        try {
            CompilerStores store = CompilerStores.on(db.dataSource());
            for (String c : clusters) {
                StoredClusters.twoVersions(store, c);
            }
            return new TestApi(db, store, run(db.url(), db.user(), db.password()));
        } catch (Exception | Error e) {
            db.close();
            throw e;
        }
    }

    /** A database of its own with no cluster yet, and the api on it; the test stores what it needs through {@link #store()}. */
    public static TestApi onEmpty() throws Exception {
        return onTwoVersions();
    }

    /** The api on a database the caller provides, migrated and filled; closing the api leaves it alone. */
    public static TestApi on(String url, String user, String password) {
        return on(url, user, password, Map.of());
    }

    /** {@link #on(String, String, String)} with more Spring properties (e.g. {@code rulesync.api.fleet}). */
    public static TestApi on(String url, String user, String password, Map<String, Object> more) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(user);
        ds.setPassword(password);
        return new TestApi(null, CompilerStores.on(ds), run(url, user, password, more));
    }

    private static ConfigurableApplicationContext run(String url, String user, String password) {
        return run(url, user, password, Map.of());
    }

    private static ConfigurableApplicationContext run(
            String url, String user, String password, Map<String, Object> more) {
        Path tokens;
        try {
            tokens = Files.createTempFile("rulesync-test-tokens-", ".txt");
            tokens.toFile().deleteOnExit();
            Files.writeString(tokens, String.join("\n", tokenProperty().split(",")) + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Object> p = new java.util.HashMap<>(Map.of(
                "server.port",
                0,
                "spring.datasource.url",
                url,
                "spring.datasource.username",
                user,
                "spring.datasource.password",
                password,
                "spring.main.banner-mode",
                "off",
                "rulesync.api.tokens-file",
                tokens.toString(),
                "rulesync.api.action-wait",
                "PT1S",
                "rulesync.api.stream-port",
                0));
        // Every request of the suite comes from one address and a handful of tokens: the rate limits are the trust
        // tests' own.
        p.put("rulesync.api.writes-per-second", 100_000);
        p.put("rulesync.api.failed-authentications-per-minute", 100_000);
        p.putAll(more);
        return new SpringApplicationBuilder(ApiApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(p)
                .run();
    }

    /**
     * A credential of {@code node} of {@code cluster} only, as every ack and node stream needs: an agent token bound to the
     * node, added to this api's tokens file, which is read again before this returns.
     */
    public synchronized String nodeToken(String cluster, String node) {
        return nodeTokens.computeIfAbsent(cluster + "/" + node, k -> {
            ApiTokens.Issued t =
                    ApiTokens.issue("node-" + nodeTokens.size(), Role.AGENT, new ApiTokens.Scope(cluster, node));
            try {
                Files.writeString(
                        Path.of(app.getEnvironment().getProperty("rulesync.api.tokens-file")),
                        t.line() + "\n",
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // The api's own two-second reload may take the new line first, so what counts is that it is known
            // once this reload (one at a time) has returned, not which of the two read it.
            Credentials credentials = app.getBean(Credentials.class);
            credentials.reload();
            Assertions.assertThat(credentials.authenticate(t.token()).found())
                    .as("the api read its tokens again")
                    .isPresent();
            return t.token();
        });
    }

    public CompilerStores store() {
        return store;
    }

    /** The database the api serves (null when the caller provided it). */
    public TestDatabase database() {
        return db;
    }

    /** The api's address, for requests the helpers here do not make (streamed answers). */
    public String baseUrl() {
        return base;
    }

    /** Where the api serves node streams: {@code 127.0.0.1:PORT}. */
    public String streamTarget() {
        return "127.0.0.1:" + app.getBean(NodeStreamServer.class).port();
    }

    public ConfigurableApplicationContext context() {
        return app;
    }

    /** GET with the viewer's token. */
    public HttpResponse<String> get(String path) throws Exception {
        return get(path, VIEWER.token());
    }

    /** GET with {@code token} (null: no Authorization header). */
    public HttpResponse<String> get(String path, String token) throws Exception {
        return send(request(path, token).GET());
    }

    /** POST of a JSON body with {@code token} (null: no Authorization header). */
    public HttpResponse<String> post(String path, String json, String token) throws Exception {
        return send(request(path, token)
                .header("Content-Type", "application/json")
                .POST(json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json)));
    }

    /** POST of {@code body} as {@code contentType} with {@code token}. */
    public HttpResponse<String> post(String path, String body, String contentType, String token) throws Exception {
        return send(request(path, token)
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    /** PUT of a JSON body with {@code token}. */
    public HttpResponse<String> put(String path, String json, String token) throws Exception {
        return send(request(path, token)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    /**
     * {@code METHOD target HTTP/1.1} sent byte for byte over a socket: HttpClient refuses to send a
     * malformed URL ({@code %zz}), and the api must answer those too.
     */
    public Raw raw(String method, String target, String token) throws IOException {
        return raw(method, target, token, "127.0.0.1");
    }

    /** {@link #raw(String, String, String)} from {@code localAddress} (any 127.x address reaches the api). */
    public Raw raw(String method, String target, String token, String localAddress) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(localAddress, 0));
            s.connect(new InetSocketAddress(
                    "127.0.0.1", Integer.parseInt(app.getEnvironment().getProperty("local.server.port"))));
            s.setSoTimeout(60_000);
            String request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + (token == null ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n";
            s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            return Raw.parse(s.getInputStream().readAllBytes());
        }
    }

    /** An HTTP response as read off the socket; header names in lower case. */
    public record Raw(int status, Map<String, String> headers, String body) {
        static Raw parse(byte[] bytes) {
            String all = new String(bytes, StandardCharsets.UTF_8);
            int end = all.indexOf("\r\n\r\n");
            String[] head = all.substring(0, end).split("\r\n");
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < head.length; i++) {
                int colon = head[i].indexOf(':');
                headers.put(
                        head[i].substring(0, colon).strip().toLowerCase(Locale.ROOT),
                        head[i].substring(colon + 1).strip());
            }
            String body = all.substring(end + 4);
            if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
                StringBuilder joined = new StringBuilder();
                int at = 0;
                while (true) {
                    int eol = body.indexOf("\r\n", at);
                    int size = Integer.parseInt(body.substring(at, eol).strip(), 16);
                    if (size == 0) {
                        break;
                    }
                    // The bodies here are ASCII JSON, so characters count as bytes.
                    joined.append(body, eol + 2, eol + 2 + size);
                    at = eol + 2 + size + 2;
                }
                body = joined.toString();
            }
            return new Raw(Integer.parseInt(head[0].split(" ")[1]), headers, body);
        }
    }

    private HttpRequest.Builder request(String path, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60));
        return token == null ? b : b.header("Authorization", "Bearer " + token);
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A JSON body as maps and lists (JSON is YAML 1.2). */
    public static Map<?, ?> json(HttpResponse<String> r) {
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
    }

    /**
     * The response is an RFC 9457 problem with this status, naming {@code parameter} (null: names
     * none), whose detail contains {@code detail}.
     */
    public static void assertProblem(HttpResponse<String> r, int status, String parameter, String detail) {
        assertProblem(
                new Raw(
                        r.statusCode(),
                        Map.of(
                                "content-type",
                                r.headers().firstValue("Content-Type").orElse("")),
                        r.body()),
                status,
                parameter,
                detail);
    }

    /** {@link #assertProblem(HttpResponse, int, String, String)} of a {@link #raw} response. */
    public static void assertProblem(Raw r, int status, String parameter, String detail) {
        Assertions.assertThat(r.status()).as(r.body()).isEqualTo(status);
        Assertions.assertThat(r.headers().getOrDefault("content-type", ""))
                .as(r.body())
                .startsWith("application/problem+json");
        Map<?, ?> p = (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
        Assertions.assertThat(p.get("status")).isEqualTo(status);
        Assertions.assertThat(p.get("parameter")).as(r.body()).isEqualTo(parameter);
        Assertions.assertThat((String) p.get("detail")).contains(detail);
    }

    @Override
    public void close() {
        app.close();
        if (db != null) {
            db.close();
        }
    }
}
