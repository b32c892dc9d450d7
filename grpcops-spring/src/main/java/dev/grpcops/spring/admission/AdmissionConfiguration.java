package dev.grpcops.spring.admission;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.AdmissionListener;
import dev.grpcops.admission.CallWidth;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.InvalidAdmissionConfigException;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.server.ServerExecutor;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Fair admission's beans, whichever gRPC integration registers its interceptor: the server-wide
 * {@link Admission} of {@code grpcops.admission.*}, its {@link CallerPolicy}, the listener and
 * gauges (Micrometer's when a meter registry is there). Imported by each starter's admission
 * auto-configuration, which registers {@link #serverInterceptor} as its integration's global server
 * interceptor. Bad settings stop the start, naming the property.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(AdmissionProperties.class)
public class AdmissionConfiguration {

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

    /**
     * The admission interceptor a starter registers: every served call but health, reflection and
     * every {@link AdminMethods} bean's methods (and {@code grpcops.admission.exempt-services}) takes
     * a seat; the application's {@link CallWidth} beans name methods whose calls take one per
     * downstream call; a call that waited for its seat starts on the {@link ServerExecutor}, when
     * there is one.
     */
    public static ServerInterceptor serverInterceptor(
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
        widths.orderedStream().forEach(server::width);
        executor.ifAvailable(pool -> server.executor(pool.executor()));
        return server.build();
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
