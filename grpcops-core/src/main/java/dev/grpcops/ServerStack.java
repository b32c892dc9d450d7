package dev.grpcops;

import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.server.MalformedRequests;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.tracing.GrpcTracing;
import dev.grpcops.warmup.WarmUp;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The library's server features as one stack, applied in the one order they work in ({@link
 * Layer}), each optional: the entry for plain grpc-java. The Spring Boot starter places its
 * interceptors in the same order.
 *
 * <pre>{@code
 * ServerStack stack = ServerStack.builder()
 *         .adminAuthorization(AdminAuthorization.builder(List.of(FaultInjection.adminMethods())).token(token).build())
 *         .warmUp()
 *         .budget(BudgetInterceptors.builder(rules).build())
 *         .admission(AdmissionInterceptors.server(admission).callsDownstream(rules).build())
 *         .faults(faults)
 *         .inFlight(inFlight)
 *         .build();
 * Server server = ServerBuilder.forPort(50061)
 *         .addService(stack.intercept(new StockService()))
 *         .addService(stack.intercept(faults.adminService()))
 *         .build();
 * }</pre>
 *
 * <p>Every service served through {@link #intercept} also has its requests parsed where a malformed
 * one can be answered {@code INVALID_ARGUMENT} ({@link MalformedRequests}), unless {@link
 * Builder#withoutMalformedRequestGuard} says otherwise. The admin methods are exempt from admission:
 * an operator's call is never queued nor shed, also under the overload it may be there to end.
 */
public final class ServerStack {

    /** The layers, outermost first: a call meets them in this order on its way to the handler. */
    public enum Layer {
        /** Refuses admin calls without the admin token before anything else costs them a thing. */
        ADMIN_AUTHORIZATION,
        /** Marks this process's own warm-up calls, before anything that leaves them out looks. */
        WARM_UP,
        /** The served call's span, in the call's gRPC context for every layer inside. */
        TRACE_CONTEXT,
        /** Gives every call its budget on arrival, so that admission holds its wait to that budget. */
        BUDGET,
        /** Admits every call before any layer inside it or the handler runs. */
        ADMISSION,
        /** Once admitted: the budget, level and admission wait onto the call's span. */
        TRACE_TAGS,
        /**
         * Injected faults, inside admission, so that a held answer keeps its seat; the time it is
         * held is left out of the adaptive limit's samples (to the limiter, the fault sits before it).
         */
        FAULTS,
        /** Counts the calls being served, so that a stopping server waits for them. */
        IN_FLIGHT
    }

    private final Map<Layer, ServerInterceptor> layers;
    /** Outermost last: {@link ServerInterceptors#intercept} runs the last one first. */
    private final List<ServerInterceptor> innermostFirst;

    private final BiConsumer<String, RuntimeException> onMalformed;
    private final boolean guard;

    private ServerStack(Builder builder) {
        EnumMap<Layer, ServerInterceptor> layers = new EnumMap<>(builder.layers);
        ServerInterceptor admission = layers.get(Layer.ADMISSION);
        if (admission != null && !builder.adminMethods.isEmpty()) {
            layers.put(Layer.ADMISSION, new AdminMethodsBypass(builder.adminMethods, admission));
        }
        this.layers = Collections.unmodifiableMap(layers);
        List<ServerInterceptor> reversed = new ArrayList<>(layers.values());
        Collections.reverse(reversed);
        this.innermostFirst = List.copyOf(reversed);
        this.onMalformed = builder.onMalformed;
        this.guard = builder.guard;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The layers this stack has, outermost first. */
    public Set<Layer> layers() {
        return layers.keySet();
    }

    /**
     * The interceptors, outermost first, for frameworks that take a list in that order. grpc-java's
     * own {@code ServerInterceptors.intercept} runs the last one first: use {@link #intercept} there
     * (it also guards against malformed requests).
     */
    public List<ServerInterceptor> interceptorsOutermostFirst() {
        return List.copyOf(layers.values());
    }

    /** {@code service} behind every layer of this stack. */
    public ServerServiceDefinition intercept(BindableService service) {
        return intercept(service.bindService());
    }

    /** {@code service} behind every layer of this stack. */
    public ServerServiceDefinition intercept(ServerServiceDefinition service) {
        ServerServiceDefinition intercepted = ServerInterceptors.intercept(service, innermostFirst);
        // The guard outermost: every layer sees typed requests (admission reads a call's width from
        // its request), as in the starter, where the guard wraps the services net.devh intercepted.
        return guard ? MalformedRequests.guard(intercepted, onMalformed) : intercepted;
    }

    /** Each feature is left out unless given. */
    public static final class Builder {

        private final EnumMap<Layer, ServerInterceptor> layers = new EnumMap<>(Layer.class);
        private Set<String> adminMethods = Set.of();
        private BiConsumer<String, RuntimeException> onMalformed = (method, failure) -> {};
        private boolean guard = true;

        private Builder() {}

        /**
         * Admin methods only with the admin token ({@code AdminAuthorization.builder(methods).token(..).build()});
         * admission, if given, never queues nor sheds them.
         */
        public Builder adminAuthorization(AdminAuthorization adminAuthorization) {
            this.adminMethods = adminAuthorization.fullMethodNames();
            return layer(Layer.ADMIN_AUTHORIZATION, adminAuthorization);
        }

        /** Marks this process's own warm-up calls ({@link WarmUp#run}) as such. */
        public Builder warmUp() {
            return layer(Layer.WARM_UP, WarmUp.serverInterceptor());
        }

        /** A span per served call, with the budget, level and wait on it once admitted. */
        public Builder tracing(GrpcTracing tracing) {
            layer(Layer.TRACE_CONTEXT, tracing.servedCalls());
            return layer(Layer.TRACE_TAGS, tracing.servedCallTags());
        }

        /** Every call's budget, from its deadline or the default. */
        public Builder budget(BudgetInterceptors budget) {
            return layer(Layer.BUDGET, budget.server());
        }

        /**
         * Fair admission by caller and priority level: what {@code AdmissionInterceptors.server(admission)...build()}
         * builds. The methods of {@link #adminAuthorization} pass it untouched.
         */
        public Builder admission(ServerInterceptor admission) {
            return layer(Layer.ADMISSION, admission);
        }

        /** Faults injected on demand (none until set). */
        public Builder faults(FaultInjection faults) {
            return layer(Layer.FAULTS, faults.interceptor());
        }

        /** Counts the calls being served, for {@link dev.grpcops.shutdown.DrainBeforeStop}. */
        public Builder inFlight(InFlightCalls inFlight) {
            return layer(Layer.IN_FLIGHT, inFlight);
        }

        /**
         * Told the full method name and the parse failure of each malformed request (for a metric
         * or a rate-limited log line); runs on the call's thread and must not block. Nothing by
         * default; the caller gets {@code INVALID_ARGUMENT} either way.
         */
        public Builder malformedRequests(BiConsumer<String, RuntimeException> onMalformed) {
            this.onMalformed = Objects.requireNonNull(onMalformed, "onMalformed");
            this.guard = true;
            return this;
        }

        /**
         * Leaves requests to grpc-java's own parsing: a malformed one fails the call {@code UNKNOWN}
         * "Application error processing RPC" ({@code MalformedRequestsTests#withoutTheGuardGrpcJavaFailsAnUndecodableRequestUnknown}).
         */
        public Builder withoutMalformedRequestGuard() {
            this.guard = false;
            return this;
        }

        public ServerStack build() {
            return new ServerStack(this);
        }

        private Builder layer(Layer layer, ServerInterceptor interceptor) {
            layers.put(layer, Objects.requireNonNull(interceptor, layer.name()));
            return this;
        }
    }

    /** Admission for every method but the admin ones, which an operator must reach on a server that sheds. */
    private static final class AdminMethodsBypass implements ServerInterceptor {

        private final Set<String> adminMethods;
        private final ServerInterceptor admission;

        AdminMethodsBypass(Set<String> adminMethods, ServerInterceptor admission) {
            this.adminMethods = adminMethods;
            this.admission = admission;
        }

        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
            return adminMethods.contains(call.getMethodDescriptor().getFullMethodName())
                    ? next.startCall(call, headers)
                    : admission.interceptCall(call, headers, next);
        }
    }
}
