package dev.grpcops.springgrpc.warmup;

import dev.grpcops.spring.warmup.WarmUpBeforeServing;
import dev.grpcops.spring.warmup.WarmUpProperties;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import dev.grpcops.warmup.WarmUp;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * The warm-up before SERVING ({@code grpcops.warmup.*}): the calls the server sends itself through
 * its own port once Spring gRPC's server listens, and the mark that tells its own warm-up calls from
 * every other caller's. The warm-up needs the plaintext port: with {@code spring.grpc.server.ssl.*}
 * on it is skipped, and says so.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
@EnableConfigurationProperties(WarmUpProperties.class)
public class WarmUpAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    WarmUpBeforeServing warmUpBeforeServing(
            WarmUpProperties properties, Environment environment, ObjectProvider<MeterRegistry> registry) {
        boolean tls = environment.getProperty("spring.grpc.server.ssl.enabled", Boolean.class, false)
                || environment.containsProperty("spring.grpc.server.ssl.bundle");
        return new WarmUpBeforeServing(properties, !tls, registry);
    }

    /** Marks the process's own warm-up calls before anything that must leave them out looks. */
    @Bean
    @GlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.WARM_UP)
    ServerInterceptor grpcopsWarmUpMark() {
        return WarmUp.serverInterceptor();
    }
}
