package dev.grpcops.bench.policies;

import io.grpc.ServerInterceptor;
import io.grpc.services.MetricRecorder;
import io.grpc.xds.orca.OrcaMetricReportingServerInterceptor;

/**
 * Per-call ORCA load reports (gRFC A51), what {@code weighted_round_robin} weighs replicas by:
 * grpc-xds's {@code OrcaMetricReportingServerInterceptor} over a grpc-services {@code MetricRecorder}.
 */
final class Orca {

    private final MetricRecorder recorder = MetricRecorder.newInstance();
    private final ServerInterceptor interceptor = OrcaMetricReportingServerInterceptor.create(recorder);

    static Orca create() {
        return new Orca();
    }

    /** Attaches the recorder's current values to every call's trailers. */
    ServerInterceptor interceptor() {
        return interceptor;
    }

    /** What every call's report says from now on. */
    void report(double qps, double eps, double applicationUtilization) {
        recorder.setQpsMetric(qps);
        recorder.setEpsMetric(eps);
        recorder.setApplicationUtilizationMetric(applicationUtilization);
    }
}
