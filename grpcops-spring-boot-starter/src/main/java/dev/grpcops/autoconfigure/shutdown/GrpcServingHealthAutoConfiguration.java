package dev.grpcops.autoconfigure.shutdown;

import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The gRPC serving status in Actuator's health endpoint as {@code grpcServing}, where the
 * application has Actuator; off with {@code management.health.grpc-serving.enabled=false}.
 */
@AutoConfiguration(after = ShutdownAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator")
@ConditionalOnBean(ServingStatusPublisher.class)
@ConditionalOnEnabledHealthIndicator("grpc-serving")
public class GrpcServingHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcServingHealthIndicator")
    HealthIndicator grpcServingHealthIndicator(ServingStatusPublisher publisher) {
        return new GrpcServingHealthIndicator(publisher);
    }
}
