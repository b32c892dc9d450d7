package dev.grpcops.spring.shutdown;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether each service this server serves may take traffic, as the standard health service reports
 * it under the service's own name (what readiness probes and health-checking clients ask): known
 * from the moment the server listens, {@code NOT_SERVING} until it has warmed up, {@code SERVING}
 * then, unless an operator drained it ({@link #drain}, {@link #resume}), and {@code NOT_SERVING}
 * for good once the shutdown drain begins (the health service's terminal state). A drain during the
 * warm-up holds: the end of the warm-up does not resume a drained service.
 */
public final class ServiceReadiness {

    private final HealthStatusManager health;
    private final Set<String> drained = ConcurrentHashMap.newKeySet();
    private volatile boolean warmedUp;

    public ServiceReadiness(HealthStatusManager health) {
        this.health = health;
    }

    /** The server listens: its services are known, not ready yet. */
    public void starting(List<String> services) {
        services.forEach(service -> health.setStatus(service, ServingStatus.NOT_SERVING));
    }

    /** The warm-up is over: every service not drained meanwhile says SERVING. */
    public synchronized void warmedUp(List<String> services) {
        warmedUp = true;
        for (String service : services) {
            if (!drained.contains(service)) {
                health.setStatus(service, ServingStatus.SERVING);
            }
        }
    }

    /** Takes {@code service} out of traffic; returns what health reports now. */
    public synchronized ServingStatus drain(String service) {
        drained.add(service);
        health.setStatus(service, ServingStatus.NOT_SERVING);
        return reported(service);
    }

    /**
     * Puts {@code service} back in traffic (once the warm-up is over: before, it says SERVING when
     * the warm-up ends); returns what health reports now.
     */
    public synchronized ServingStatus resume(String service) {
        drained.remove(service);
        if (warmedUp) {
            health.setStatus(service, ServingStatus.SERVING);
        }
        return reported(service);
    }

    /** What a health Check of {@code service} answers now; {@code SERVICE_UNKNOWN} for a name health does not know. */
    public ServingStatus reported(String service) {
        AtomicReference<ServingStatus> reported = new AtomicReference<>(ServingStatus.SERVICE_UNKNOWN);
        ((HealthGrpc.HealthImplBase) health.getHealthService())
                .check(HealthCheckRequest.newBuilder().setService(service).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(HealthCheckResponse response) {
                        reported.set(response.getStatus());
                    }

                    @Override
                    public void onError(Throwable notFound) {
                        // an unknown name: SERVICE_UNKNOWN
                    }

                    @Override
                    public void onCompleted() {}
                });
        return reported.get();
    }
}
