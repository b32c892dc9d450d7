package dev.grpcops.autoconfigure.fault;

import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.spring.fault.FaultConfiguration;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import net.devh.boot.grpc.server.service.GrpcService;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * Fault injection in every service, injecting nothing unless asked: faults set by
 * {@code grpcops.fault.*} at start, or at run time through {@code grpcops.v1.Faults/Set}, an admin
 * method (the same token as Drain; refused without one). The interceptor runs inside admission, so a
 * held answer keeps its seat; health, reflection and admin methods are never touched.
 * {@code grpcops.fault.enabled=false} leaves the service without it. Bad settings stop the start,
 * naming the property.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(GrpcGlobalServerInterceptor.class)
@ConditionalOnProperty(prefix = "grpcops.fault", name = "enabled", matchIfMissing = true)
@Import(FaultConfiguration.class)
public class FaultAutoConfiguration {

    @Bean
    @GrpcService
    BindableService grpcopsFaultsService(FaultInjection injection) {
        return injection.adminService();
    }

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsFaultInterceptor")
    @GrpcGlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.FAULTS)
    ServerInterceptor grpcopsFaultInterceptor(FaultInjection injection) {
        return injection.interceptor();
    }
}
