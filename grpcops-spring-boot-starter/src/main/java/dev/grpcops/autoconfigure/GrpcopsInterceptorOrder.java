package dev.grpcops.autoconfigure;

import dev.grpcops.ChannelStack;
import dev.grpcops.ServerStack;
import dev.grpcops.spring.LayerOffsets;
import net.devh.boot.grpc.common.util.InterceptorOrder;
import org.springframework.core.Ordered;

/**
 * Where each of the library's global interceptors sits among net.devh's: the layers of {@link
 * ServerStack.Layer} and {@link ChannelStack.Layer}, in their order (held to it by a test), as the
 * numbers {@code @Order} takes. Lower runs first (outermost). net.devh's metrics interceptor runs at
 * {@link InterceptorOrder#ORDER_TRACING_METRICS}; admin authorization runs outside it, so that a
 * flood of refused admin calls costs nothing more, and the library's other interceptors right inside
 * it, so that they are counted, and everything they reject is too.
 */
public final class GrpcopsInterceptorOrder {

    /**
     * Server: checks the admin token before anything else costs the call a thing (metrics, tracing,
     * budget, admission): a flood of refused admin calls is refused at the door.
     */
    public static final int ADMIN_AUTHORIZATION =
            InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.ADMIN_AUTHORIZATION;
    /** Server: marks the process's own warm-up calls, before anything that leaves them out looks. */
    public static final int WARM_UP = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.WARM_UP;
    /** Server: the served call's span (while traces are exported), in its gRPC context for every interceptor inside. */
    public static final int TRACE_CONTEXT = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.TRACE_CONTEXT;
    /** Server: gives every call its budget on arrival, before admission holds its wait to that budget. */
    public static final int BUDGET = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.BUDGET;
    /** Server: admits every call before any later interceptor or handler runs. */
    public static final int ADMISSION = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.ADMISSION;
    /** Server: once admitted, the budget, level and wait go onto the call's span (when traced). */
    public static final int TRACE_TAGS = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.TRACE_TAGS;
    /** Server: injects faults (off unless asked) inside admission, so a held answer keeps its seat. */
    public static final int FAULTS = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.FAULTS;
    /** Server: counts the calls being served, for the drain. */
    public static final int IN_FLIGHT = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.IN_FLIGHT;

    /** Client: names the target of each attempt and marks extra attempts. */
    public static final int RETRY_ATTEMPTS = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.RETRY_ATTEMPTS;
    /** Client: hands each downstream call remaining − reserve, or does not send it. */
    public static final int BUDGET_CLIENT = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.BUDGET_CLIENT;
    /** Client: forwards the served call's caller and criticality. */
    public static final int CALLER_FORWARDING = InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.CALLER_FORWARDING;
    /** Client: innermost, each attempt's span (while traces are exported), with the deadline handed down and its number. */
    public static final int TRACE_ATTEMPT_TAGS =
            InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.TRACE_ATTEMPT_TAGS;

    private GrpcopsInterceptorOrder() {}

    /** The {@code @Order} of {@code layer}'s global server interceptor. */
    public static int of(ServerStack.Layer layer) {
        return InterceptorOrder.ORDER_TRACING_METRICS + LayerOffsets.of(layer);
    }

    /**
     * The {@code @Order} of {@code layer}'s global client interceptor; the readiness gate, the
     * cancellation budget and the balancing listener are added on each channel's builder, inside
     * every global interceptor ({@link Ordered#LOWEST_PRECEDENCE}).
     */
    public static int of(ChannelStack.Layer layer) {
        int offset = LayerOffsets.of(layer);
        return offset == Integer.MAX_VALUE
                ? Ordered.LOWEST_PRECEDENCE
                : InterceptorOrder.ORDER_TRACING_METRICS + offset;
    }
}
