package dev.grpcops.cli;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * What a TARGET argument means: {@code host:port}, a gRPC name such as
 * {@code dns:///whoami-headless:50051}, or a list {@code a:p,b:p,c:p} of pod addresses.
 */
public final class Targets {

    static {
        NameResolverRegistry.getDefaultRegistry().register(new AddressListNameResolverProvider());
    }

    private Targets() {
    }

    /** The gRPC target string for a TARGET argument. */
    static String grpcTarget(String target) {
        if (target.contains(",")) {
            for (String address : target.split(",")) {
                socketAddress(address);
            }
            return AddressListNameResolverProvider.SCHEME + ":///" + target;
        }
        return target;
    }

    /** A plaintext channel to TARGET with {@code config} as its default service config. */
    public static ManagedChannel channel(String target, ChannelConfig config) {
        ManagedChannelBuilder<?> builder = ManagedChannelBuilder.forTarget(grpcTarget(target)).usePlaintext();
        Map<String, ?> serviceConfig = config.serviceConfig();
        if (!serviceConfig.isEmpty()) {
            builder.defaultServiceConfig(serviceConfig);
        }
        return builder.build();
    }

    static InetSocketAddress socketAddress(String address) {
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

    /** The named channel configs of SPEC §6. */
    public enum ChannelConfig {
        /** No config: pick_first, one connection. */
        pinned(Map.of()),
        /** round_robin over every resolved address. */
        rr(Map.of("loadBalancingConfig", List.of(Map.of("round_robin", Map.of())))),
        /** round_robin, skipping addresses whose grpcops.v1.WhoAmI health is not SERVING. */
        hc(Map.of("loadBalancingConfig", List.of(Map.of("round_robin", Map.of())),
                "healthCheckConfig", Map.of("serviceName", "grpcops.v1.WhoAmI")));

        private final Map<String, ?> serviceConfig;

        ChannelConfig(Map<String, ?> serviceConfig) {
            this.serviceConfig = serviceConfig;
        }

        Map<String, ?> serviceConfig() {
            return serviceConfig;
        }
    }
}
