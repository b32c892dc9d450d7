package dev.grpcops.autoconfigure.tracing;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.deadline.BudgetRules;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.binder.grpc.GrpcServerObservationContext;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.ObservationPredicate;
import io.micrometer.observation.ObservationRegistry;
import java.util.Set;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * While traces are exported ({@link TracingEnvironment}): every served call's span carries the
 * budget on arrival, the reserve, the admission level and wait, and what was not sent for lack of
 * budget; every downstream attempt (retries and hedges each their own span) carries the deadline
 * handed down and its attempt number, and is a child of the served call's span whichever thread
 * starts it. Micrometer's per-call timers that come with the observations are dropped: net.devh's
 * interceptor metrics already count every call.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "dev.grpcops.autoconfigure.deadline.BudgetAutoConfiguration",
            "dev.grpcops.autoconfigure.admission.AdmissionAutoConfiguration"
        })
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnProperty(
        name = {TracingEnvironment.TRACING, TracingEnvironment.GRPC_OBSERVATIONS},
        havingValue = "true")
public class TracingAutoConfiguration {

    /** The timers Micrometer's gRPC observations would add (the spans are what is wanted). */
    static final Set<String> OBSERVATION_TIMERS = Set.of(
            "grpc.server",
            "grpc.server.active",
            "grpc.server.received",
            "grpc.server.sent",
            "grpc.server.cancelled",
            "grpc.client",
            "grpc.client.active",
            "grpc.client.received",
            "grpc.client.sent",
            "grpc.client.cancelled");

    @Bean
    MeterFilter grpcopsObservationTimersDenied() {
        return MeterFilter.deny(id -> OBSERVATION_TIMERS.contains(id.getName()));
    }

    /** Health checks, reflection and fault injection's admin service are not traced: probes would fill the traces. */
    @Bean
    ObservationPredicate grpcopsInfrastructureNotTraced() {
        return (name, context) -> !(context instanceof GrpcServerObservationContext served
                && InfrastructureServices.NAMES.contains(served.getServiceName()));
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalServerInterceptor.class)
    @ConditionalOnBean(ObservationRegistry.class)
    static class ServerSide {

        @Bean
        ServedCallTracing grpcopsServedCallTracing(
                ObservationRegistry registry, BudgetRules rules, ObjectProvider<CallerPolicy> policy) {
            return new ServedCallTracing(registry, rules, policy.getIfAvailable());
        }

        @Bean
        @GrpcGlobalServerInterceptor
        @Order(GrpcopsInterceptorOrder.TRACE_CONTEXT)
        ServerInterceptor grpcopsServedObservation(ServedCallTracing tracing) {
            return tracing.capture();
        }

        @Bean
        @GrpcGlobalServerInterceptor
        @Order(GrpcopsInterceptorOrder.TRACE_TAGS)
        ServerInterceptor grpcopsServedCallTags(ServedCallTracing tracing) {
            return tracing.tags();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
    @ConditionalOnBean(ObservationRegistry.class)
    static class ClientSide {

        @Bean
        AttemptTracing grpcopsAttemptTracing(ObservationRegistry registry) {
            return new AttemptTracing(registry);
        }

        @Bean
        @GrpcGlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.TRACE_PARENT)
        ClientInterceptor grpcopsAttemptParent(AttemptTracing tracing) {
            return tracing.parent();
        }

        @Bean
        @GrpcGlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.TRACE_ATTEMPT_TAGS)
        ClientInterceptor grpcopsAttemptTags(AttemptTracing tracing) {
            return tracing.tags();
        }
    }
}
