package dev.grpcops.spring.client;

import dev.grpcops.client.ReconnectNudger;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Outgoing channels' beans, whichever integration makes the channels: the balancing service config
 * of {@code grpcops.client.*} ({@link ChannelServiceConfigs}), what each channel's builder gets
 * ({@link ChannelLayers}) and what then follows each channel ({@link ChannelFollowers}) and the {@link ReconnectNudger}. Imported by
 * each starter's client auto-configuration, which applies the layers to every channel its
 * integration makes and hands each made channel to the followers.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ClientProperties.class)
public class ClientConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ChannelServiceConfigs channelServiceConfigs(ClientProperties properties) {
        return new ChannelServiceConfigs(properties);
    }

    @Bean
    @ConditionalOnMissingBean
    ChannelFollowers channelFollowers() {
        return new ChannelFollowers();
    }

    /** Nudges idle channels to reconnect ({@code grpcops.client.reconnect-interval}). */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    ReconnectNudger reconnectNudger(ClientProperties properties) {
        return new ReconnectNudger(properties.getReconnectInterval());
    }

    @Bean
    @ConditionalOnMissingBean
    ChannelLayers channelLayers(
            ClientProperties properties,
            ChannelServiceConfigs serviceConfigs,
            ChannelFollowers followers,
            ObjectProvider<MeterRegistry> registry) {
        return new ChannelLayers(properties, serviceConfigs, followers, registry);
    }
}
