package dev.grpcops.budget.autoconfigure;

import dev.grpcops.lifecycle.ServingStatusPublisher;
import io.grpc.protobuf.services.HealthStatusManager;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Health names for every served service, on net.devh's {@link HealthStatusManager}. */
@AutoConfiguration(afterName = "net.devh.boot.grpc.server.autoconfigure.GrpcHealthServiceAutoConfiguration")
@ConditionalOnClass({GrpcServerStartedEvent.class, HealthStatusManager.class})
public class LifecycleAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(HealthStatusManager.class)
    ServingStatusPublisher servingStatusPublisher(HealthStatusManager health) {
        return new ServingStatusPublisher(health);
    }
}
