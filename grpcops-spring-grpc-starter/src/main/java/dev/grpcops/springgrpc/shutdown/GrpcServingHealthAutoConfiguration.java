package dev.grpcops.springgrpc.shutdown;

import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The gRPC serving status in Actuator's health endpoint as {@code grpcServing}, where the
 * application has Actuator; off with {@code management.health.grpc-serving.enabled=false}. Spring
 * gRPC's own health scheduler goes the other way (the application's health into gRPC health).
 */
@AutoConfiguration(after = ShutdownAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
@ConditionalOnBean(ServingStatusPublisher.class)
@ConditionalOnEnabledHealthIndicator("grpc-serving")
public class GrpcServingHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcServingHealthIndicator")
    HealthIndicator grpcServingHealthIndicator(ServingStatusPublisher publisher) {
        return new GrpcServingHealthIndicator(publisher);
    }
}
