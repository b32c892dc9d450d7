package dev.grpcops.springgrpc.admission;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.CallWidth;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.server.ServerExecutor;
import dev.grpcops.spring.admission.AdmissionConfiguration;
import dev.grpcops.spring.admission.AdmissionProperties;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.client.GlobalClientInterceptor;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * Fair admission in front of every served call, on by default ({@link AdmissionConfiguration}'s
 * beans): its interceptor right inside Spring gRPC's observation, so rejections are observed too,
 * and before every other one; the caller forwarded on downstream calls. Health, reflection and every
 * {@link AdminMethods} bean's methods are exempt. {@code grpcops.admission.enabled=false} switches it
 * off; bad settings stop the start, naming the property.
 */
@AutoConfiguration(
        afterName = {"dev.grpcops.springgrpc.budget.BudgetAutoConfiguration", "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
@ConditionalOnProperty(prefix = "grpcops.admission", name = "enabled", matchIfMissing = true)
@Import(AdmissionConfiguration.class)
public class AdmissionAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsAdmissionInterceptor")
    @GlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.ADMISSION)
    ServerInterceptor grpcopsAdmissionInterceptor(
            Admission admission,
            CallerPolicy policy,
            AdmissionProperties properties,
            ObjectProvider<AdminMethods> adminMethods,
            ObjectProvider<CallWidth<?>> widths,
            ObjectProvider<ServerExecutor> executor,
            BudgetRules rules) {
        return AdmissionConfiguration.serverInterceptor(
                admission, policy, properties, adminMethods, widths, executor, rules);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean(name = "grpcopsCallerForwardingInterceptor")
        @GlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.CALLER_FORWARDING)
        ClientInterceptor grpcopsCallerForwardingInterceptor() {
            return AdmissionInterceptors.callerForwarding();
        }
    }
}
