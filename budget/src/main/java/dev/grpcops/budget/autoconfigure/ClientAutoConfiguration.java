package dev.grpcops.budget.autoconfigure;

import dev.grpcops.client.ClientProperties;
import dev.grpcops.client.HealthCheckedChannels;
import dev.grpcops.client.ReconnectNudger;
import dev.grpcops.client.ReconnectingChannelFactory;
import java.util.List;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.channelfactory.InProcessChannelFactory;
import net.devh.boot.grpc.client.channelfactory.InProcessOrAlternativeChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.client.interceptor.GlobalClientInterceptorRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;

/**
 * Outgoing channels that balance across every backend, skip draining ones, and come back quickly:
 * health-checked round_robin for the clients named in {@code grpcops.client.health-checked}, and
 * net.devh's channel factory with the {@link ReconnectNudger}. Backs off when the application
 * defines its own {@link GrpcChannelFactory}.
 */
@AutoConfiguration(beforeName = "net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
@ConditionalOnClass(name = {"net.devh.boot.grpc.client.channelfactory.ShadedNettyChannelFactory",
    "io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder"})
@EnableConfigurationProperties(ClientProperties.class)
public class ClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    HealthCheckedChannels healthCheckedChannels(ClientProperties properties) {
        return new HealthCheckedChannels(properties.getHealthChecked());
    }

    @Bean
    @ConditionalOnMissingBean
    ReconnectNudger reconnectNudger(ClientProperties properties) {
        return new ReconnectNudger(properties.getReconnectInterval());
    }

    @Bean
    @Lazy
    @ConditionalOnMissingBean(GrpcChannelFactory.class)
    GrpcChannelFactory reconnectingGrpcChannelFactory(GrpcChannelsProperties properties,
            GlobalClientInterceptorRegistry interceptors, List<GrpcChannelConfigurer> configurers,
            ReconnectNudger nudger) {
        return new InProcessOrAlternativeChannelFactory(properties,
                new InProcessChannelFactory(properties, interceptors, configurers),
                new ReconnectingChannelFactory(properties, interceptors, configurers, nudger));
    }
}
