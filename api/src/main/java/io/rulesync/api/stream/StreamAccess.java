package io.rulesync.api.stream;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Authentication;
import io.rulesync.api.access.RateLimits;
import io.rulesync.api.access.Role;
import io.rulesync.client.stream.NodeSync;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.stream.ServerFrame;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may open a node stream: a node's own credential (an agent token bound to that node, or the node's ServiceAccount
 * token), for the cluster and node the call's headers name. Acks ride the stream, so it speaks for its node: a credential
 * bound to a cluster only, or to nothing, reads rules over REST but opens no stream. Decided before the stream's first
 * message, as the REST endpoints decide before the body, by the same {@link Authentication}: a refusal costs the api one
 * lookup of the token, and failures are counted, limited and logged as theirs are.
 */
final class StreamAccess implements ServerInterceptor {
    private static final Logger log = LoggerFactory.getLogger(StreamAccess.class);
    static final Context.Key<Identity> IDENTITY = Context.key("rulesync-node");
    /** Whether the node takes its frames' bodies deflated (it said so in {@link NodeSync#ACCEPT_ENCODING}). */
    static final Context.Key<Boolean> DEFLATE = Context.key("rulesync-deflate");

    /**
     * The node a stream speaks for, and the credential that says so (kept to check it again when the api's credentials
     * change: a revoked one ends the stream).
     */
    record Identity(String cluster, String node, ApiTokens.Caller caller, String bearer) {
        @Override
        public String toString() {
            return "Identity[" + cluster + "/" + node + ", " + caller.name() + "]";
        }
    }

    private final Authentication authentication;

    StreamAccess(Authentication authentication) {
        this.authentication = authentication;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        Authentication.Outcome outcome = authentication.authenticate(
                headers.get(NodeSync.AUTHORIZATION), host(call), "STREAM", NodeSync.SERVICE);
        ApiTokens.Caller caller = outcome.caller();
        if (caller == null) {
            call.close(
                    switch (outcome.refusal()) {
                        case TOO_MANY_FAILURES ->
                            Status.RESOURCE_EXHAUSTED.withDescription(
                                    "too many failed authentications from this address; " + "try again in "
                                            + RateLimits.retryAfter(outcome.retryAfter()) + " s");
                        case NO_BEARER_TOKEN ->
                            Status.UNAUTHENTICATED.withDescription("this stream needs 'authorization: Bearer TOKEN'");
                        case NOT_VALID -> Status.UNAUTHENTICATED.withDescription(Authentication.NOT_VALID);
                    },
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        if (caller.role() != Role.AGENT) {
            return deny(
                    call,
                    caller,
                    "token '" + caller.name() + "' has role " + caller.role().id()
                            + "; the node stream is for agent tokens");
        }
        String cluster = headers.get(NodeSync.CLUSTER);
        String node = headers.get(NodeSync.NODE);
        Optional<String> bad = names(cluster, node);
        if (bad.isPresent()) {
            call.close(Status.INVALID_ARGUMENT.withDescription(bad.get()), new Metadata());
            return new ServerCall.Listener<>() {};
        }
        ApiTokens.Scope scope = caller.scope();
        if (scope.cluster() != null && !scope.cluster().equals(cluster)) {
            return deny(
                    call,
                    caller,
                    "token '" + caller.name() + "' is bound to cluster '" + scope.cluster() + "'; it may not speak for"
                            + " cluster '" + cluster + "'");
        }
        if (scope.node() != null && !scope.node().equals(node)) {
            return deny(
                    call,
                    caller,
                    "token '" + caller.name() + "' is bound to node '" + scope.node() + "' of cluster '"
                            + scope.cluster() + "'; it may not speak for node '" + node + "'");
        }
        if (!caller.speaksFor(cluster, node)) {
            return deny(
                    call,
                    caller,
                    "token '" + caller.name()
                            + "' is not bound to a node: a node stream carries acks, which only node '" + node
                            + "''s own credential may send");
        }
        Context ctx = Context.current()
                .withValues(
                        IDENTITY,
                        new Identity(cluster, node, caller, outcome.bearer()),
                        DEFLATE,
                        takesDeflate(headers.get(NodeSync.ACCEPT_ENCODING)));
        // Headers at once, before any version: the node knows its stream reached a replica that took it, even while
        // it waits for the next version (NodeStream.Listener#answered).
        ServerCall<Q, A> answered = new HeadersOnce<>(call);
        answered.sendHeaders(new Metadata());
        return Contexts.interceptCall(ctx, answered, headers, next);
    }

    /** A call whose headers go once: the ones sent at the start; gRPC's own, sent with the first message, are dropped. */
    private static final class HeadersOnce<Q, A> extends ForwardingServerCall.SimpleForwardingServerCall<Q, A> {
        private volatile boolean sent;

        HeadersOnce(ServerCall<Q, A> call) {
            super(call);
        }

        @Override
        public void sendHeaders(Metadata headers) {
            if (!sent) {
                sent = true;
                super.sendHeaders(headers);
            }
        }
    }

    /** Whether {@code accepted} (a comma-separated list; null: an agent that names none) has deflate. */
    static boolean takesDeflate(String accepted) {
        return accepted != null
                && Arrays.stream(accepted.split(",")).map(String::strip).anyMatch(ServerFrame.DEFLATE::equals);
    }

    /** Why the headers' cluster and node are not names the api takes; empty when they are. */
    static Optional<String> names(String cluster, String node) {
        if (cluster == null || node == null) {
            return Optional.of(
                    "the stream needs the headers " + NodeSync.CLUSTER.name() + " and " + NodeSync.NODE.name());
        }
        String p = KubernetesNames.checkNamespace(cluster);
        if (p != null) {
            return Optional.of(NodeSync.CLUSTER.name() + ": " + p);
        }
        p = KubernetesNames.checkSubdomain(node);
        return p == null ? Optional.empty() : Optional.of(NodeSync.NODE.name() + ": " + p);
    }

    /** The caller's IP address, as the REST endpoints key their limits and failure logs by. */
    private static String host(ServerCall<?, ?> call) {
        SocketAddress a = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        return a instanceof InetSocketAddress i && i.getAddress() != null
                ? i.getAddress().getHostAddress()
                : String.valueOf(a);
    }

    private static <Q, A> ServerCall.Listener<Q> deny(ServerCall<Q, A> call, ApiTokens.Caller caller, String why) {
        log.info("refused a node stream to {}: {}", caller.name(), KubernetesNames.printable(why));
        call.close(Status.PERMISSION_DENIED.withDescription(why), new Metadata());
        return new ServerCall.Listener<>() {};
    }
}
