package dev.grpcops.cli;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * Resolves {@code list:///a:p,b:p,c:p} to those addresses, one per pod: on one machine it stands
 * in for what DNS answers for a Kubernetes headless Service.
 */
final class AddressListNameResolverProvider extends NameResolverProvider {

    static final String SCHEME = "list";

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (String address : target.getPath().substring(1).split(",")) {
            groups.add(new EquivalentAddressGroup(Targets.socketAddress(address)));
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
    public java.util.Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
