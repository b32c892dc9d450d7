package dev.grpcops.autoconfigure.tracing;

import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.deadline.Budget;
import dev.grpcops.deadline.BudgetRules;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Optional;

/**
 * The served call's span, and what the library knows of the call on it. Two interceptors:
 * {@link #capture()} right inside Micrometer's observation interceptor puts the call's observation
 * and arrival time in its gRPC {@link Context}, where every thread that works for the call finds it
 * (a call that waited for admission starts on another thread; a hedge starts on the timer thread);
 * {@link #tags()}, once admission let the call in, writes the budget on arrival, the reserve, the
 * admission level, the caller and the wait onto the span.
 */
final class ServedCallTracing {

    private static final Context.Key<Long> ARRIVED = Context.key("grpcops-served-arrival");

    private final ObservationRegistry registry;
    private final BudgetRules rules;
    private final CallerPolicy policy;

    /** @param policy the admission's caller policy, or null without admission */
    ServedCallTracing(ObservationRegistry registry, BudgetRules rules, CallerPolicy policy) {
        this.registry = registry;
        this.rules = rules;
        this.policy = policy;
    }

    ServerInterceptor capture() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                    ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                Observation observation = registry.getCurrentObservation();
                if (observation == null) {
                    return next.startCall(call, headers);
                }
                Context context =
                        Context.current().withValues(CallTags.SERVED, observation, ARRIVED, System.nanoTime());
                return Contexts.interceptCall(context, call, headers, next);
            }
        };
    }

    ServerInterceptor tags() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                    ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                Observation observation = CallTags.served();
                if (observation != null && !observation.isNoop()) {
                    tag(observation);
                }
                return next.startCall(call, headers);
            }
        };
    }

    private void tag(Observation observation) {
        Long arrived = ARRIVED.get();
        long waitNanos = arrived == null ? 0 : Math.max(0, System.nanoTime() - arrived);
        observation.highCardinalityKeyValue("grpcops.admission.wait_ms", millis(waitNanos));
        Optional<Budget> budget = Budget.current();
        if (budget.isPresent()) {
            observation.highCardinalityKeyValue(
                    "grpcops.budget.remaining_ms",
                    millis(budget.get().remaining().toNanos() + waitNanos));
            observation.highCardinalityKeyValue(
                    "grpcops.budget.reserve_ms", millis(rules.reserve().toNanos()));
            observation.highCardinalityKeyValue(
                    "grpcops.budget.defaulted", Boolean.toString(budget.get().defaulted()));
            if (budget.get().arrivedAsRetry()) {
                observation.highCardinalityKeyValue("grpcops.budget.arrived_as_retry", "true");
            }
        }
        Optional<Caller> caller = Caller.current();
        if (caller.isPresent()) {
            observation.highCardinalityKeyValue("grpcops.caller", caller.get().id());
            observation.highCardinalityKeyValue(
                    "grpcops.criticality", caller.get().criticality().value());
            if (policy != null) {
                observation.highCardinalityKeyValue("grpcops.admission.level", policy.levelOf(caller.get()));
            }
        }
    }

    static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
    }
}
