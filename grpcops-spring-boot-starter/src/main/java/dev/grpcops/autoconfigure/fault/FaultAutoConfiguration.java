package dev.grpcops.autoconfigure.fault;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.FaultListener;
import dev.grpcops.fault.Faults;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashSet;
import java.util.Set;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import net.devh.boot.grpc.server.service.GrpcService;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

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
@EnableConfigurationProperties(FaultProperties.class)
public class FaultAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        FaultListener micrometerFaultListener(MeterRegistry registry) {
            return new MicrometerFaultListener(registry);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    FaultListener faultListener() {
        return FaultListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean
    FaultInjection faultInjection(
            FaultProperties properties,
            FaultListener listener,
            Environment environment,
            ObjectProvider<AdminMethods> adminMethods) {
        Faults faults = properties.toFaults();
        Set<String> exemptMethods = new HashSet<>();
        adminMethods.orderedStream().forEach(methods -> exemptMethods.addAll(methods.fullMethodNames()));
        return FaultInjection.builder()
                .replica(replica(properties, environment))
                .faults(faults)
                .listener(listener)
                .exemptMethods(exemptMethods)
                .build();
    }

    @Bean
    AdminMethods grpcopsFaultAdminMethods() {
        return FaultInjection.adminMethods();
    }

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

    private static String replica(FaultProperties properties, Environment environment) {
        if (properties.getReplica() != null && !properties.getReplica().isBlank()) {
            return properties.getReplica();
        }
        return environment.getProperty("POD_NAME", environment.getProperty("HOSTNAME", "local"));
    }
}
