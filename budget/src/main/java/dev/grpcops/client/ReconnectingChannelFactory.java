package dev.grpcops.client;

import io.grpc.ManagedChannel;
import java.util.List;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.ShadedNettyChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.client.interceptor.GlobalClientInterceptorRegistry;

/** net.devh's Netty channel factory, with every channel it makes handed to the {@link ReconnectNudger}. */
public final class ReconnectingChannelFactory extends ShadedNettyChannelFactory {

    private final ReconnectNudger nudger;

    public ReconnectingChannelFactory(GrpcChannelsProperties properties,
            GlobalClientInterceptorRegistry interceptors, List<GrpcChannelConfigurer> configurers,
            ReconnectNudger nudger) {
        super(properties, interceptors, configurers);
        this.nudger = nudger;
    }

    @Override
    protected ManagedChannel newManagedChannel(String name) {
        ManagedChannel channel = super.newManagedChannel(name);
        nudger.watch(channel);
        return channel;
    }
}
