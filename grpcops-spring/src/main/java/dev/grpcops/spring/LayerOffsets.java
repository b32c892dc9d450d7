package dev.grpcops.spring;

import dev.grpcops.ChannelStack;
import dev.grpcops.ServerStack;

/**
 * Where each layer of {@link ServerStack} and {@link ChannelStack} sits among an integration's
 * global interceptors, as an offset from its metrics interceptor's {@code @Order} (net.devh's
 * {@code InterceptorOrder.ORDER_TRACING_METRICS}, Spring gRPC's server observation interceptor at 0;
 * Spring gRPC's client observation has no order and runs inside every client layer): lower runs
 * first (outermost) in both. Admin authorization runs outside metrics, so that a flood of
 * refused admin calls costs nothing more; every other layer right inside it, so that it is counted,
 * and everything it rejects is too. Each starter's {@code GrpcopsInterceptorOrder} adds these to its
 * integration's metrics order; the order of the layers is the stacks' own (held by a test).
 */
public final class LayerOffsets {

    /** Server: checks the admin token before anything else costs the call a thing. */
    public static final int ADMIN_AUTHORIZATION = -1;
    /** Server: marks the process's own warm-up calls, before anything that leaves them out looks. */
    public static final int WARM_UP = 2;
    /** Server: the served call's span, in its gRPC context for every interceptor inside. */
    public static final int TRACE_CONTEXT = 3;
    /** Server: gives every call its budget on arrival, before admission holds its wait to that budget. */
    public static final int BUDGET = 50;
    /** Server: admits every call before any later interceptor or handler runs. */
    public static final int ADMISSION = 100;
    /** Server: once admitted, the budget, level and wait go onto the call's span. */
    public static final int TRACE_TAGS = 110;
    /** Server: injects faults inside admission, so a held answer keeps its seat. */
    public static final int FAULTS = 125;
    /** Server: counts the calls being served, for the drain. */
    public static final int IN_FLIGHT = 150;

    /** Client: names the target of each attempt and marks extra attempts. */
    public static final int RETRY_ATTEMPTS = 50;
    /** Client: hands each downstream call remaining − reserve, or does not send it. */
    public static final int BUDGET_CLIENT = 60;
    /** Client: forwards the served call's caller and criticality. */
    public static final int CALLER_FORWARDING = 70;
    /** Client: innermost of the global ones, each attempt's span. */
    public static final int TRACE_ATTEMPT_TAGS = 80;

    private LayerOffsets() {}

    /** {@code layer}'s offset among the global server interceptors. */
    public static int of(ServerStack.Layer layer) {
        return switch (layer) {
            case ADMIN_AUTHORIZATION -> ADMIN_AUTHORIZATION;
            case WARM_UP -> WARM_UP;
            case TRACE_CONTEXT -> TRACE_CONTEXT;
            case BUDGET -> BUDGET;
            case ADMISSION -> ADMISSION;
            case TRACE_TAGS -> TRACE_TAGS;
            case FAULTS -> FAULTS;
            case IN_FLIGHT -> IN_FLIGHT;
        };
    }

    /**
     * {@code layer}'s offset among the global client interceptors; the readiness gate, the
     * cancellation budget and the balancing listener are added on each channel's builder, inside
     * every global interceptor ({@link Integer#MAX_VALUE}).
     */
    public static int of(ChannelStack.Layer layer) {
        return switch (layer) {
            case RETRY_ATTEMPTS -> RETRY_ATTEMPTS;
            case BUDGET -> BUDGET_CLIENT;
            case CALLER_FORWARDING -> CALLER_FORWARDING;
            case TRACE_ATTEMPT -> TRACE_ATTEMPT_TAGS;
            case READINESS, CANCELLATIONS, BALANCING_EVENTS -> Integer.MAX_VALUE;
        };
    }
}
