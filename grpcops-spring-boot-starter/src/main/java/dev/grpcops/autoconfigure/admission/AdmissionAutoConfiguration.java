package dev.grpcops.autoconfigure.admission;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.InvalidAdmissionConfigException;
import dev.grpcops.admission.internal.AdmissionServerInterceptor;
import dev.grpcops.admission.internal.CallerForwardingInterceptor;
import dev.grpcops.budget.BudgetRules;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.common.util.InterceptorOrder;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * Fair admission (SPEC §9) in front of every served call, on by default: the server-wide
 * {@link Admission}, its interceptor (right after net.devh's metrics interceptor, so rejections are
 * counted there too, and before every other one), the caller forwarded on downstream calls, and the
 * metrics. Health, reflection and every {@link AdminMethods} bean's methods are exempt.
 * {@code grpcops.admission.enabled=false} switches it off. Bad settings stop the start, naming the property.
 */
@AutoConfiguration(afterName = {"dev.grpcops.autoconfigure.budget.BudgetAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(GrpcGlobalServerInterceptor.class)
@ConditionalOnProperty(prefix = "grpcops.admission", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(AdmissionProperties.class)
public class AdmissionAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CallerPolicy callerPolicy(AdmissionProperties properties) {
        return named(() -> properties.toPolicy());
    }

    @Bean
    @ConditionalOnMissingBean
    Admission admission(AdmissionProperties properties, CallerPolicy policy, ObjectProvider<MeterRegistry> registry) {
        AdmissionConfig config = named(() -> {
            AdmissionConfig checked = properties.toConfig();
            checked.check(policy);
            return checked;
        });
        MeterRegistry meters = registry.getIfAvailable(CompositeMeterRegistry::new);
        Admission admission = Admission.create(config, new MicrometerAdmissionListener(meters,
                properties.getLevels().keySet()));
        MicrometerAdmissionListener.registerGauges(meters, admission);
        return admission;
    }

    @Bean
    @ConditionalOnMissingBean
    @GrpcGlobalServerInterceptor
    @Order(InterceptorOrder.ORDER_TRACING_METRICS + 100)
    AdmissionServerInterceptor admissionServerInterceptor(Admission admission, CallerPolicy policy,
            AdmissionProperties properties, ObjectProvider<AdminMethods> adminMethods, ObjectProvider<BudgetRules> rules) {
        Set<String> exemptMethods = new HashSet<>();
        adminMethods.orderedStream().forEach(methods -> exemptMethods.addAll(methods.fullMethodNames()));
        BudgetRules budget = rules.getIfAvailable(() -> BudgetRules.DEFAULTS);
        Duration needed = properties.isCallsDownstream() ? budget.reserve().plus(budget.minDownstream()) : Duration.ZERO;
        return new AdmissionServerInterceptor(admission, policy, new HashSet<>(properties.getExemptServices()),
                exemptMethods, budget.defaultBudget(), BudgetRules.NO_DEADLINE_BEYOND, needed);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean
        @GrpcGlobalClientInterceptor
        CallerForwardingInterceptor callerForwardingInterceptor() {
            return new CallerForwardingInterceptor();
        }
    }

    private static <T> T named(java.util.function.Supplier<T> build) {
        try {
            return build.get();
        } catch (InvalidAdmissionConfigException e) {
            // The core names the field; the property is what the operator wrote.
            throw new IllegalArgumentException(AdmissionProperties.PREFIX + e.getMessage());
        }
    }
}
