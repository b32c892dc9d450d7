package dev.grpcops.springgrpc.tracing;

import dev.grpcops.spring.tracing.TracingConfiguration;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.binder.grpc.GrpcServerObservationContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingObservationHandler;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
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
 * While traces are exported ({@link TracingEnvironment}), the library's spans on Spring Boot's
 * OpenTelemetry SDK (its sampler, propagators and OTLP exporter): a span per served call with the
 * budget on arrival, the reserve, the admission level and wait; a span per downstream attempt
 * (retries and hedges each their own) with the deadline handed down and its attempt number.
 * Wherever Micrometer Tracing is, Spring gRPC's observations go on recording their timers but make
 * no spans of their own ({@link GrpcObservationsWithoutSpans}): one span per call, the library's,
 * and none at all while nothing is exported.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration",
            "dev.grpcops.springgrpc.budget.BudgetAutoConfiguration",
            "dev.grpcops.springgrpc.admission.AdmissionAutoConfiguration"
        })
@ConditionalOnClass({OpenTelemetry.class, GrpcTracing.class})
public class TracingAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = TracingEnvironment.EXPORT, havingValue = "true")
    @ConditionalOnBean(OpenTelemetry.class)
    @Import(TracingConfiguration.class)
    static class LibrarySpans {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
        static class ServerSide {

            @Bean
            @ConditionalOnMissingBean(name = "grpcopsServedCallSpans")
            @GlobalServerInterceptor
            @Order(GrpcopsInterceptorOrder.TRACE_CONTEXT)
            ServerInterceptor grpcopsServedCallSpans(GrpcTracing tracing) {
                return tracing.servedCalls();
            }

            @Bean
            @ConditionalOnMissingBean(name = "grpcopsServedCallTags")
            @GlobalServerInterceptor
            @Order(GrpcopsInterceptorOrder.TRACE_TAGS)
            ServerInterceptor grpcopsServedCallTags(GrpcTracing tracing) {
                return tracing.servedCallTags();
            }
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
        static class ClientSide {

            @Bean
            @ConditionalOnMissingBean(name = "grpcopsAttemptSpans")
            @GlobalClientInterceptor
            @Order(GrpcopsInterceptorOrder.TRACE_ATTEMPT)
            ClientInterceptor grpcopsAttemptSpans(GrpcTracing tracing) {
                return tracing.attempts();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({TracingObservationHandler.class, GrpcServerObservationContext.class})
    @ConditionalOnBean(Tracer.class)
    static class ObservationsWithoutSpans {

        @Bean
        @ConditionalOnMissingBean
        GrpcObservationsWithoutSpans grpcopsGrpcObservationsWithoutSpans(Tracer tracer) {
            return new GrpcObservationsWithoutSpans(tracer);
        }
    }
}
