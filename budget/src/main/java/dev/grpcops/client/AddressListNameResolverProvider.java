package dev.grpcops.client;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Resolves {@code list:///a:p,b:p,c:p} to those addresses, one per backend: a fixed set of
 * replicas, or on one machine a stand-in for what DNS answers for a Kubernetes headless Service.
 * Registered with gRPC's default registry (META-INF/services), so any channel takes such a
 * target, net.devh's {@code grpc.client.NAME.address} included. (net.devh's own
 * {@code static://a:p,b:p} is refused by current grpc-java's stricter URI parsing.)
 */
public final class AddressListNameResolverProvider extends NameResolverProvider {

    public static final String SCHEME = "list";

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (String address : target.getPath().substring(1).split(",")) {
            groups.add(new EquivalentAddressGroup(socketAddress(address)));
        }
        return new NameResolver() {
            @Override
            public String getServiceAuthority() {
                return "localhost";
            }

            @Override
            public void start(Listener2 listener) {
                listener.onResult(ResolutionResult.newBuilder().setAddresses(groups).build());
            }

            @Override
            public void shutdown() {
            }
        };
    }

    /** {@code host:port} as a socket address, or an IllegalArgumentException saying what is wrong. */
    public static InetSocketAddress socketAddress(String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("'" + address + "' is not host:port");
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + address + "' is not host:port");
        }
        return new InetSocketAddress(address.substring(0, colon), port);
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
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
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
