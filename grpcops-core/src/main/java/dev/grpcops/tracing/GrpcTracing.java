package dev.grpcops.tracing;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.tracing.internal.AttemptSpanInterceptor;
import dev.grpcops.tracing.internal.ServedCallInterceptor;
import dev.grpcops.tracing.internal.ServedCallTagsInterceptor;
import dev.grpcops.tracing.internal.ServedSpan;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.SpanContext;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Traces of gRPC calls, at a small cost per call: a span per served call and per downstream attempt
 * (a retry or a hedge is an attempt of its own, numbered), the trace context carried on the calls'
 * metadata by the application's propagators, the deadline budget and admission on the spans. The
 * SDK's sampler decides once per trace; under a call whose trace is not sampled nothing is recorded
 * and no attempt span is made, only the trace context goes on. Health, reflection and the fault
 * service are not traced, nor are warm-up calls.
 *
 * <pre>{@code
 * GrpcTracing tracing = GrpcTracing.builder(openTelemetry).budgetRules(BudgetRules.DEFAULTS).build();
 * ManagedChannel stock = ManagedChannelBuilder.forTarget("dns:///stock:50061")
 *         .intercept(tracing.attempts(), budget.client()) // the first is innermost
 *         .build();
 * ServerServiceDefinition pricing = ServerInterceptors.intercept(new PricingService(stock),
 *         tracing.servedCallTags(), admit, budget.server(), tracing.servedCalls()); // the last listed runs first
 * }</pre>
 */
public final class GrpcTracing {

    private final ServerInterceptor servedCalls;
    private final ServerInterceptor servedCallTags;
    private final ClientInterceptor attempts;

    private GrpcTracing(Builder builder) {
        var tracer = builder.openTelemetry.getTracer("dev.grpcops");
        var propagator = builder.openTelemetry.getPropagators().getTextMapPropagator();
        this.servedCalls = new ServedCallInterceptor(tracer, propagator, builder.excludedServices);
        this.servedCallTags = new ServedCallTagsInterceptor(builder.budgetRules, builder.callerPolicy);
        this.attempts = new AttemptSpanInterceptor(tracer, propagator);
    }

    public static Builder builder(OpenTelemetry openTelemetry) {
        return new Builder(openTelemetry);
    }

    /**
     * For the server, outside every other interceptor of the library: the served call's span, a
     * child of the caller's trace context.
     */
    public ServerInterceptor servedCalls() {
        return servedCalls;
    }

    /**
     * For the server, inside admission: the budget on arrival, the reserve, the caller and its
     * level and the admission wait, onto the served call's span.
     */
    public ServerInterceptor servedCallTags() {
        return servedCallTags;
    }

    /**
     * For every channel, inside every other interceptor (it reads the deadline and attempt number
     * they set): a span per attempt, and the trace context sent downstream.
     */
    public ClientInterceptor attempts() {
        return attempts;
    }

    /**
     * The span context of the call served in the current gRPC context (sampled or not), or null
     * outside a traced call: what a log line written while serving is correlated by.
     */
    public static @Nullable SpanContext currentSpanContext() {
        ServedSpan served = ServedSpan.current();
        return served == null ? null : served.span().getSpanContext();
    }

    /** The OpenTelemetry instance, and what the spans say. */
    public static final class Builder {

        private final OpenTelemetry openTelemetry;
        private BudgetRules budgetRules;
        private CallerPolicy callerPolicy;
        private Set<String> excludedServices = Set.copyOf(InfrastructureServices.NAMES);

        private Builder(OpenTelemetry openTelemetry) {
            this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
        }

        /** The budget's rules, for the reserve on each served call's span; none by default. */
        public Builder budgetRules(BudgetRules budgetRules) {
            this.budgetRules = budgetRules;
            return this;
        }

        /** Admission's caller policy, for the priority level on each served call's span; none by default. */
        public Builder callerPolicy(CallerPolicy callerPolicy) {
            this.callerPolicy = callerPolicy;
            return this;
        }

        /** Services whose calls are not traced: health, reflection and the fault service by default. */
        public Builder excludedServices(Set<String> excludedServices) {
            this.excludedServices = Set.copyOf(excludedServices);
            return this;
        }

        public GrpcTracing build() {
            return new GrpcTracing(this);
        }
    }
}
