package dev.grpcops.springgrpc.tracing;

import io.micrometer.core.instrument.binder.grpc.GrpcClientObservationContext;
import io.micrometer.core.instrument.binder.grpc.GrpcServerObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingObservationHandler;
import org.springframework.core.Ordered;

/**
 * The first of Micrometer Tracing's handlers for Spring gRPC's observations of calls, served and
 * sent: it takes them and makes no span, so that the library's span is the call's only one (two
 * server spans per call would split its trace), while the observations' timers are still recorded.
 * Micrometer Tracing hands an observation to the first tracing handler that supports it; this one
 * runs before its own. The observation's tracing context stays empty: the meter handlers Spring
 * Boot wraps for exemplars require one.
 */
public final class GrpcObservationsWithoutSpans
        implements TracingObservationHandler<Observation.Context>, Ordered {

    private final Tracer tracer;

    GrpcObservationsWithoutSpans(Tracer tracer) {
        this.tracer = tracer;
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return context instanceof GrpcServerObservationContext || context instanceof GrpcClientObservationContext;
    }

    @Override
    public void onStart(Observation.Context context) {
        getTracingContext(context);
    }

    @Override
    public void onScopeOpened(Observation.Context context) {}

    @Override
    public void onScopeClosed(Observation.Context context) {}

    @Override
    public void onScopeReset(Observation.Context context) {}

    @Override
    public void onEvent(Observation.Event event, Observation.Context context) {}

    @Override
    public void onError(Observation.Context context) {}

    @Override
    public void onStop(Observation.Context context) {}

    @Override
    public Tracer getTracer() {
        return tracer;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
