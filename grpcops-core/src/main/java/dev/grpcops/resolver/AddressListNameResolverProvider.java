package dev.grpcops.resolver;

import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;

/**
 * Resolves {@code list:///a:p,b:p,c:p} (or {@code list://authority/a:p,b:p}) to those addresses,
 * one per backend: a fixed set of replicas, or on one machine a stand-in for what DNS answers for
 * a Kubernetes headless Service. Registered with gRPC's default registry (META-INF/services), so
 * any channel takes such a target, net.devh's {@code grpc.client.NAME.address} included.
 * (net.devh's own {@code static://a:p,b:p} is refused by current grpc-java's stricter URI parsing.)
 *
 * <p>Its priority is below DNS's, so a target without a scheme is always DNS's, whatever the
 * classpath order.
 */
public final class AddressListNameResolverProvider extends NameResolverProvider {

    public static final String SCHEME = "list";
    /** DNS's is 5: a target without a scheme must never come here. */
    static final int PRIORITY = 4;

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        return new AddressListNameResolver(target, args);
    }

    /**
     * The form channels use: grpc-java parses targets as RFC 3986 URIs by default
     * ({@code GRPC_ENABLE_RFC3986_URIS}), and some that parse, a bare {@code list:} among them,
     * are refused by {@link URI}, which the inherited version converts to: that would throw from
     * the channel's construction instead of failing its calls.
     */
    @Override
    public NameResolver newNameResolver(io.grpc.Uri target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        return new AddressListNameResolver(target.toString(), target.getAuthority(), target.getPath(), args);
    }

    /** {@code host:port} as an unresolved socket address, or an IllegalArgumentException saying what is wrong. */
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
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("'" + address + "': port must be 1-65535");
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return InetSocketAddress.createUnresolved(host, port);
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
        return PRIORITY;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
