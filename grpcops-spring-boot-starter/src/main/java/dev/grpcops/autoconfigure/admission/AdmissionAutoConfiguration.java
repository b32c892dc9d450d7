package dev.grpcops.autoconfigure.admission;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.AdmissionListener;
import dev.grpcops.admission.CallWidth;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.InvalidAdmissionConfigException;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.server.ServerExecutor;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
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
@EnableConfigurationProperties(AdmissionProperties.class)
public class AdmissionAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CallerPolicy callerPolicy(AdmissionProperties properties) {
        return named(properties::toPolicy);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        AdmissionListener micrometerAdmissionListener(MeterRegistry registry, AdmissionProperties properties) {
            return new MicrometerAdmissionListener(
                    registry, properties.getLevels().keySet());
        }

        /** The gauges read the admission itself when scraped. */
        @Bean
        MeterBinder grpcopsAdmissionGauges(Admission admission) {
            return registry -> MicrometerAdmissionListener.registerGauges(registry, admission);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    AdmissionListener admissionListener() {
        return AdmissionListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean
    Admission admission(AdmissionProperties properties, CallerPolicy policy, AdmissionListener listener) {
        AdmissionConfig config = named(() -> {
            AdmissionConfig checked = properties.toConfig();
            checked.check(policy);
            return checked;
        });
        return Admission.builder(config).listener(listener).build();
    }

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
        Set<String> exemptMethods = new HashSet<>();
        adminMethods.orderedStream().forEach(methods -> exemptMethods.addAll(methods.fullMethodNames()));
        AdmissionInterceptors.ServerBuilder server = AdmissionInterceptors.server(admission)
                .policy(policy)
                .exemptServices(new HashSet<>(properties.getExemptServices()))
                .exemptMethods(exemptMethods)
                .defaultBudget(rules.defaultBudget());
        if (properties.isCallsDownstream()) {
            server.callsDownstream(rules);
        }
        // The application's CallWidth beans: methods whose calls take a seat per downstream call.
        widths.orderedStream().forEach(server::width);
        // A call that waited for its seat starts on the server's executor, when it has one.
        executor.ifAvailable(pool -> server.executor(pool.executor()));
        return server.build();
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

    private static <T> T named(Supplier<T> build) {
        try {
            return build.get();
        } catch (InvalidAdmissionConfigException e) {
            // The core names the field; the property is what the operator wrote.
            throw new IllegalArgumentException(AdmissionProperties.PREFIX + e.getMessage());
        }
    }
}
