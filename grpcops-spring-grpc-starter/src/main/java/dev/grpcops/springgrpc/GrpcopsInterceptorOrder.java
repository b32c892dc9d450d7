package dev.grpcops.springgrpc;

import dev.grpcops.spring.LayerOffsets;

/**
 * Where each of the library's global interceptors sits among Spring gRPC's, as the numbers
 * {@code @Order} takes: the library's layers at the offsets from {@value #OBSERVATION} that {@link
 * LayerOffsets} gives (the same as under net.devh's metrics interceptor). Lower runs first
 * (outermost). On the server Spring gRPC's observation interceptor runs at {@value #OBSERVATION}:
 * admin authorization outside it, every other layer inside. Its client observation interceptor has
 * no order and runs inside every global client layer: it times each attempt sent, and a call the
 * library does not send (no budget left) is not in its timers, only in the library's own metrics.
 */
public final class GrpcopsInterceptorOrder {

    /** The {@code @Order} of Spring gRPC's server observation interceptor. */
    public static final int OBSERVATION = 0;

    /** Server: checks the admin token before anything else, observations included. */
    public static final int ADMIN_AUTHORIZATION = OBSERVATION + LayerOffsets.ADMIN_AUTHORIZATION;
    /** Server: marks the process's own warm-up calls. */
    public static final int WARM_UP = OBSERVATION + LayerOffsets.WARM_UP;
    /** Server: the served call's span, while traces are exported. */
    public static final int TRACE_CONTEXT = OBSERVATION + LayerOffsets.TRACE_CONTEXT;
    /** Server: gives every call its budget on arrival. */
    public static final int BUDGET = OBSERVATION + LayerOffsets.BUDGET;
    /** Server: admits every call before any later interceptor or handler runs. */
    public static final int ADMISSION = OBSERVATION + LayerOffsets.ADMISSION;
    /** Server: once admitted, the budget, level and wait go onto the call's span. */
    public static final int TRACE_TAGS = OBSERVATION + LayerOffsets.TRACE_TAGS;
    /** Server: injects faults inside admission. */
    public static final int FAULTS = OBSERVATION + LayerOffsets.FAULTS;
    /** Server: counts the calls being served, for the drain. */
    public static final int IN_FLIGHT = OBSERVATION + LayerOffsets.IN_FLIGHT;

    /** Client: names the target of each attempt and marks extra attempts. */
    public static final int RETRY_ATTEMPTS = OBSERVATION + LayerOffsets.RETRY_ATTEMPTS;
    /** Client: hands each downstream call remaining − reserve, or does not send it. */
    public static final int BUDGET_CLIENT = OBSERVATION + LayerOffsets.BUDGET_CLIENT;
    /** Client: forwards the served call's caller and criticality. */
    public static final int CALLER_FORWARDING = OBSERVATION + LayerOffsets.CALLER_FORWARDING;

    /** Client: innermost of the global ones, each attempt's span. */
    public static final int TRACE_ATTEMPT = OBSERVATION + LayerOffsets.TRACE_ATTEMPT_TAGS;

    private GrpcopsInterceptorOrder() {}
}
