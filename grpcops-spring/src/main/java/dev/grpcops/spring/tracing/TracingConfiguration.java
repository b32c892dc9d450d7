package dev.grpcops.spring.tracing;

import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.tracing.GrpcTracing;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@link GrpcTracing} on the application's {@link OpenTelemetry} (Spring Boot's SDK: its sampler,
 * propagators and OTLP exporter), with the budget's rules and admission's caller policy so that
 * served calls' spans carry the reserve and the priority level. Imported by each starter's tracing
 * auto-configuration, which registers the three interceptors its integration's way, and only while
 * traces are exported. Backs off when the application defines its own.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBean(OpenTelemetry.class)
public class TracingConfiguration {

    @Bean
    @ConditionalOnMissingBean
    GrpcTracing grpcopsTracing(
            OpenTelemetry openTelemetry, ObjectProvider<BudgetRules> rules, ObjectProvider<CallerPolicy> policy) {
        return GrpcTracing.builder(openTelemetry)
                .budgetRules(rules.getIfAvailable())
                .callerPolicy(policy.getIfAvailable())
                .build();
    }
}
