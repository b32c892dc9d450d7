package dev.grpcops.autoconfigure.tracing;

import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.spring.tracing.TracingConfiguration;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.opentelemetry.api.OpenTelemetry;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * While traces are exported ({@link TracingEnvironment}), the library's spans on Spring Boot's
 * OpenTelemetry SDK (its sampler, propagators and OTLP exporter): a span per served call with the
 * budget on arrival, the reserve, the admission level and wait, and what was not sent for lack of
 * budget; a span per downstream attempt (retries and hedges each their own) with the deadline handed
 * down and its attempt number. In place of Micrometer's gRPC observations, which cost a scope around
 * every callback of every call, sampled or not: {@code management.tracing.grpc.enabled=true} brings
 * those back instead.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.opentelemetry.OpenTelemetryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.tracing.OpenTelemetryTracingAutoConfiguration",
            "dev.grpcops.autoconfigure.budget.BudgetAutoConfiguration",
            "dev.grpcops.autoconfigure.admission.AdmissionAutoConfiguration"
        })
@ConditionalOnClass({OpenTelemetry.class, GrpcTracing.class})
@ConditionalOnProperty(name = TracingEnvironment.TRACING, havingValue = "true")
public class TracingAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = TracingEnvironment.GRPC_OBSERVATIONS, havingValue = "false")
    @ConditionalOnBean(OpenTelemetry.class)
    @Import(TracingConfiguration.class)
    static class LibrarySpans {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(GrpcGlobalServerInterceptor.class)
        static class ServerSide {

            @Bean
            @GrpcGlobalServerInterceptor
            @Order(GrpcopsInterceptorOrder.TRACE_CONTEXT)
            ServerInterceptor grpcopsServedCallSpans(GrpcTracing tracing) {
                return tracing.servedCalls();
            }

            @Bean
            @GrpcGlobalServerInterceptor
            @Order(GrpcopsInterceptorOrder.TRACE_TAGS)
            ServerInterceptor grpcopsServedCallTags(GrpcTracing tracing) {
                return tracing.servedCallTags();
            }
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
        static class ClientSide {

            @Bean
            @GrpcGlobalClientInterceptor
            @Order(GrpcopsInterceptorOrder.TRACE_ATTEMPT_TAGS)
            ClientInterceptor grpcopsAttemptSpans(GrpcTracing tracing) {
                return tracing.attempts();
            }
        }
    }
}
