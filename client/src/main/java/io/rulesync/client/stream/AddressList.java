package io.rulesync.client.stream;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The api replicas a node may stream from, given as {@code host:port,host:port}: gRPC's resolver for the target
 * {@code rulesync-list:///host:port,host:port}. Each address is resolved when the channel connects; with
 * {@code pick_first} over a shuffled list, each node holds one replica and moves to another when it goes.
 * (In Kubernetes a headless Service does the same through gRPC's own {@code dns:///} resolver.)
 */
final class AddressList extends NameResolverProvider {
    static final String SCHEME = "rulesync-list";

    /** The target for a comma-separated list of {@code host:port}. */
    static String target(String list) {
        return SCHEME + ":///" + list;
    }

    /** {@code host:port} items of a comma-separated list; a problem names the item. */
    static List<InetSocketAddress> parse(String list) {
        List<InetSocketAddress> out = new ArrayList<>();
        for (String item : list.split(",")) {
            String s = item.strip();
            int colon = s.lastIndexOf(':');
            if (colon <= 0 || colon == s.length() - 1) {
                throw new IllegalArgumentException("'" + s + "' is not host:port");
            }
            String host = s.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(s.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + s + "': the port is not a number");
            }
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("'" + s + "': port " + port + " is out of range");
            }
            out.add(InetSocketAddress.createUnresolved(host, port));
        }
        return out;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        String list = target.getPath().startsWith("/") ? target.getPath().substring(1) : target.getPath();
        return new NameResolver() {
            @Override
            public String getServiceAuthority() {
                return "rulesync-api";
            }

            @Override
            public void start(Listener2 listener) {
                try {
                    List<EquivalentAddressGroup> groups = new ArrayList<>();
                    for (InetSocketAddress a : parse(list)) {
                        // Each address's own host is what its TLS certificate must name: the list has no single
                        // authority.
                        groups.add(new EquivalentAddressGroup(
                                new InetSocketAddress(a.getHostString(), a.getPort()),
                                Attributes.newBuilder()
                                        .set(EquivalentAddressGroup.ATTR_AUTHORITY_OVERRIDE, a.getHostString())
                                        .build()));
                    }
                    listener.onResult(
                            ResolutionResult.newBuilder().setAddresses(groups).build());
                } catch (IllegalArgumentException e) {
                    listener.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
                }
            }

            @Override
            public void shutdown() {}
        };
    }
}
