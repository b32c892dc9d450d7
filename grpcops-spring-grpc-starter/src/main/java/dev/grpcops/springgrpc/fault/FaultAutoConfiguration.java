package dev.grpcops.springgrpc.fault;

import dev.grpcops.fault.FaultInjection;
import dev.grpcops.spring.fault.FaultConfiguration;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * Fault injection in every service, injecting nothing unless asked ({@link FaultConfiguration}):
 * {@code grpcops.v1.Faults} served beside the application's services (an admin method), the
 * interceptor inside admission. {@code grpcops.fault.enabled=false} leaves the service without it.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
@ConditionalOnProperty(prefix = "grpcops.fault", name = "enabled", matchIfMissing = true)
@Import(FaultConfiguration.class)
public class FaultAutoConfiguration {

    /** Spring gRPC serves every {@link BindableService} bean. */
    @Bean
    BindableService grpcopsFaultsService(FaultInjection injection) {
        return injection.adminService();
    }

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsFaultInterceptor")
    @GlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.FAULTS)
    ServerInterceptor grpcopsFaultInterceptor(FaultInjection injection) {
        return injection.interceptor();
    }
}
