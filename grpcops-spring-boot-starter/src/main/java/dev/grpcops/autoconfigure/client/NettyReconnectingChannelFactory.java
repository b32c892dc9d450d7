package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.ReconnectNudger;
import io.grpc.ManagedChannel;
import java.util.List;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.NettyChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.client.interceptor.GlobalClientInterceptorRegistry;

/** net.devh's plain-Netty channel factory, with every channel it makes handed to the {@link ReconnectNudger} and its {@link ChannelReadiness} gate. */
final class NettyReconnectingChannelFactory extends NettyChannelFactory {

    private final ReconnectNudger nudger;
    private final ChannelReadiness readiness;

    NettyReconnectingChannelFactory(
            GrpcChannelsProperties properties,
            GlobalClientInterceptorRegistry interceptors,
            List<GrpcChannelConfigurer> configurers,
            ReconnectNudger nudger,
            ChannelReadiness readiness) {
        super(properties, interceptors, configurers);
        this.nudger = nudger;
        this.readiness = readiness;
    }

    @Override
    protected ManagedChannel newManagedChannel(String name) {
        ManagedChannel channel = super.newManagedChannel(name);
        nudger.watch(channel);
        readiness.follow(name, channel);
        return channel;
    }
}
