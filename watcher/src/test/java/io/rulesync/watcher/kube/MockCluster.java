package io.rulesync.watcher.kube;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A fabric8 {@link KubernetesMockServer} in CRUD mode: real HTTP lists and websocket watches against
 * an in-memory store, so the informers run exactly the code they run against a real API server.
 *
 * <p>Two additions for relist tests: the server can be stopped and started again on the same port
 * with the same store (objects can be deleted while it is down, so no watch sees the delete), and the
 * next watch of each kind can be answered with a 410 Gone error event, as an API server does when the
 * watch's resourceVersion is too old. That forces fabric8 to relist.
 */
final class MockCluster implements AutoCloseable {
    static final String SERVICES = "/api/v1/services";
    static final String SLICES = "/apis/discovery.k8s.io/v1/endpointslices";
    static final String NODES = "/api/v1/nodes";

    /** The mock server logs every request through java.util.logging; kept (JUL holds loggers weakly) and quietened. */
    private static final java.util.logging.Logger MOCK_LOG =
            java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    static {
        MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    private final KubernetesCrudDispatcher store = new KubernetesCrudDispatcher();
    private final Set<String> goneOnNextWatch = ConcurrentHashMap.newKeySet();
    private final Dispatcher dispatcher = new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath();
            int q = path.indexOf('?');
            if (q > 0 && path.contains("watch=true") && goneOnNextWatch.remove(path.substring(0, q))) {
                return gone();
            }
            return store.dispatch(request);
        }
    };
    private KubernetesMockServer server;
    private final int port;
    private KubernetesClient client;

    MockCluster() {
        server = newServer();
        server.init();
        port = server.getPort();
    }

    private KubernetesMockServer newServer() {
        return new KubernetesMockServer(
                new Context(Serialization.jsonMapper()), new MockWebServer(), new HashMap<>(), dispatcher, false);
    }

    private static MockResponse gone() {
        return new MockResponse().withWebSocketUpgrade(new WebSocketListener() {
            @Override
            public void onOpen(WebSocket webSocket, Response response) {
                webSocket.send(
                        "{\"type\":\"ERROR\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\","
                                + "\"code\":410,\"reason\":\"Expired\",\"message\":\"too old resource version\"}}");
            }
        });
    }

    /** A client for the test's own writes. */
    synchronized KubernetesClient client() {
        if (client == null) {
            client = server.createClient();
        }
        return client;
    }

    /** A kubeconfig file for this server, as a fleet file would name it. */
    Path kubeconfig(Path dir) throws Exception {
        Path f = dir.resolve("kubeconfig-" + port);
        Files.writeString(f, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster: {server: "http://localhost:%d"}
                users:
                - name: test
                  user: {token: secret}
                contexts:
                - name: mock
                  context: {cluster: mock, user: test}
                current-context: mock
                """.formatted(port));
        return f;
    }

    void stop() {
        server.destroy();
    }

    /** Starts again on the same port and store; the first watch of each kind then gets 410 Gone. */
    void startWithGoneWatches() {
        goneOnNextWatch.addAll(Set.of(SERVICES, SLICES, NODES));
        server = newServer();
        server.init(InetAddress.getLoopbackAddress(), port);
    }

    /**
     * Deletes straight from the store (works while the server is stopped). The stopped server's watch
     * listeners stay registered in the store until their websockets report closed, which races with
     * this call: telling such a listener fails on its terminated executor after the object is already
     * removed, so that failure is ignored once a read confirms the object is gone.
     */
    void deleteFromStore(String path) {
        try {
            store.handleDelete(path);
        } catch (java.util.concurrent.RejectedExecutionException stoppedWatch) {
            if (store.handleGet(path).code() != 404) {
                throw stoppedWatch;
            }
        }
    }

    @Override
    public void close() {
        if (client != null) {
            client.close();
        }
        server.destroy();
    }

    static Service service(String namespace, String name, String clusterIP, int port) {
        ServiceBuilder b = new ServiceBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .addNewPort()
                .withName("http")
                .withProtocol("TCP")
                .withPort(port)
                .endPort()
                .endSpec();
        if (clusterIP != null) {
            b.editSpec().withClusterIP(clusterIP).withClusterIPs(clusterIP).endSpec();
        }
        return b.build();
    }

    static EndpointSlice slice(String namespace, String name, String service, String... ips) {
        EndpointSliceBuilder b = new EndpointSliceBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(name)
                .addToLabels("kubernetes.io/service-name", service)
                .addToLabels("endpointslice.kubernetes.io/managed-by", "test")
                .endMetadata()
                .withAddressType("IPv4")
                .addNewPort()
                .withName("http")
                .withProtocol("TCP")
                .withPort(8080)
                .endPort();
        for (String ip : ips) {
            b.addNewEndpoint()
                    .withAddresses(ip)
                    .withNewConditions()
                    .withReady(true)
                    .withServing(true)
                    .withTerminating(false)
                    .endConditions()
                    .withNodeName("node-a")
                    .endEndpoint();
        }
        return b.build();
    }

    static io.fabric8.kubernetes.api.model.Node node(String name, String ip) {
        return new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels("topology.kubernetes.io/zone", "z1")
                .endMetadata()
                .withNewStatus()
                .addNewAddress()
                .withType("InternalIP")
                .withAddress(ip)
                .endAddress()
                .addNewAddress()
                .withType("Hostname")
                .withAddress(name)
                .endAddress()
                .addNewCondition()
                .withType("Ready")
                .withStatus("True")
                .withLastHeartbeatTime("2026-01-01T00:00:00Z")
                .endCondition()
                .endStatus()
                .build();
    }
}
