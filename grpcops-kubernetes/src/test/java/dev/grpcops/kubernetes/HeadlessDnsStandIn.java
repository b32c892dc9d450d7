package dev.grpcops.kubernetes;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What {@code dns:///} does with a headless Service, on loopback: answers the current pod IPs when
 * the channel asks (at start, and when gRPC asks again: after a connection closed), never by
 * itself. Kinder than the real one, which also caches answers for 30 s.
 */
final class HeadlessDnsStandIn extends NameResolverProvider {

    private final AtomicReference<List<String>> ips;
    private final int port;
    final AtomicInteger resolutions = new AtomicInteger();

    HeadlessDnsStandIn(List<String> ips, int port) {
        this.ips = new AtomicReference<>(List.copyOf(ips));
        this.port = port;
    }

    /** The DNS answer changes (a pod became ready); nobody is told. */
    void answer(List<String> ips) {
        this.ips.set(List.copyOf(ips));
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        return new NameResolver() {
            private Listener2 listener;

            @Override
            public String getServiceAuthority() {
                return "headless";
            }

            @Override
            public void start(Listener2 listener) {
                this.listener = listener;
                refresh();
            }

            @Override
            public void refresh() {
                resolutions.incrementAndGet();
                List<EquivalentAddressGroup> groups = ips.get().stream()
                        .map(ip -> new EquivalentAddressGroup(new InetSocketAddress(ip, port)))
                        .toList();
                listener.onResult2(
                        ResolutionResult.newBuilder().setAddresses(groups).build());
            }

            @Override
            public void shutdown() {}
        };
    }

    @Override
    public String getDefaultScheme() {
        return "headless";
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 4;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
