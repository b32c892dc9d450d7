package dev.grpcops.spring.fault;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.FaultListener;
import dev.grpcops.fault.Faults;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashSet;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Fault injection's beans, whichever gRPC integration serves them: the {@link FaultInjection} of
 * {@code grpcops.fault.*} (injecting nothing unless asked), its listener (Micrometer's when a meter
 * registry is there) and its admin methods. Imported by each starter's fault auto-configuration,
 * which serves {@link FaultInjection#adminService()} and registers {@link FaultInjection#interceptor()}
 * inside admission. Bad settings stop the start, naming the property.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(FaultProperties.class)
public class FaultConfiguration {

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

    private static String replica(FaultProperties properties, Environment environment) {
        if (properties.getReplica() != null && !properties.getReplica().isBlank()) {
            return properties.getReplica();
        }
        return environment.getProperty("POD_NAME", environment.getProperty("HOSTNAME", "local"));
    }
}
