package dev.grpcops.autoconfigure.warmup;

import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.spring.warmup.WarmUpBeforeServing;
import dev.grpcops.spring.warmup.WarmUpProperties;
import dev.grpcops.warmup.WarmUp;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * The warm-up before SERVING ({@code grpcops.warmup.*}): the calls the server sends itself through
 * its own port once it listens, and the mark that tells its own warm-up calls from every other
 * caller's.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(GrpcServerStartedEvent.class)
@EnableConfigurationProperties(WarmUpProperties.class)
public class WarmUpAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    WarmUpBeforeServing warmUpBeforeServing(
            WarmUpProperties properties, GrpcServerProperties server, ObjectProvider<MeterRegistry> registry) {
        boolean plaintext =
                server.getSecurity() == null || !server.getSecurity().isEnabled();
        return new WarmUpBeforeServing(properties, plaintext, registry);
    }

    /**
     * Outermost: marks the process's own warm-up calls (its token, {@link WarmUp#serverInterceptor()})
     * before anything that must leave them out looks, and drops the header from any other caller.
     */
    @Bean
    @GrpcGlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.WARM_UP)
    ServerInterceptor grpcopsWarmUpMark() {
        return WarmUp.serverInterceptor();
    }
}
