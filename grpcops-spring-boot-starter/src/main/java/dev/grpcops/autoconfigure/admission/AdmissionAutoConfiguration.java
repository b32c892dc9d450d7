package dev.grpcops.autoconfigure.admission;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.CallWidth;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.server.ServerExecutor;
import dev.grpcops.spring.admission.AdmissionConfiguration;
import dev.grpcops.spring.admission.AdmissionProperties;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * Fair admission in front of every served call, on by default: the server-wide {@link Admission},
 * its interceptor (right after net.devh's metrics and tracing interceptors, so rejections are
 * counted and traced there too, and before every other one), the caller forwarded on downstream
 * calls, and the metrics. Health, reflection and every {@link AdminMethods} bean's methods are
 * exempt. {@code grpcops.admission.enabled=false} switches it off. Bad settings stop the start,
 * naming the property.
 */
@AutoConfiguration(
        afterName = {
            "dev.grpcops.autoconfigure.budget.BudgetAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass(GrpcGlobalServerInterceptor.class)
@ConditionalOnProperty(prefix = "grpcops.admission", name = "enabled", matchIfMissing = true)
@Import(AdmissionConfiguration.class)
public class AdmissionAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsAdmissionInterceptor")
    @GrpcGlobalServerInterceptor
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
    @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean(name = "grpcopsCallerForwardingInterceptor")
        @GrpcGlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.CALLER_FORWARDING)
        ClientInterceptor grpcopsCallerForwardingInterceptor() {
            return AdmissionInterceptors.callerForwarding();
        }
    }
}
