package dev.grpcops.whoami;

import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.atomic.AtomicReference;
import net.devh.boot.grpc.server.service.GrpcService;

/**
 * Drain flips only this service's health name, which readiness probes and health-checking
 * clients watch; {@code ""}, which liveness watches, never changes, so a drained pod keeps
 * running and is not restarted. Drain and Resume answer the status health reports after the
 * change: once the shutdown drain has begun (health's terminal state, where every name stays
 * {@code NOT_SERVING}), Resume answers {@code NOT_SERVING}.
 */
@GrpcService
class WhoAmIService extends WhoAmIGrpc.WhoAmIImplBase {

    static final String SERVICE = WhoAmIGrpc.SERVICE_NAME;

    private final HealthStatusManager health;
    private final WhoAmIProperties properties;

    WhoAmIService(HealthStatusManager health, WhoAmIProperties properties) {
        this.health = health;
        this.properties = properties;
    }

    @Override
    public void who(WhoRequest request, StreamObserver<WhoReply> responses) {
        responses.onNext(WhoReply.newBuilder().setPod(properties.podName()).build());
        responses.onCompleted();
    }

    @Override
    public void drain(DrainRequest request, StreamObserver<DrainReply> responses) {
        set(ServingStatus.NOT_SERVING, responses);
    }

    @Override
    public void resume(DrainRequest request, StreamObserver<DrainReply> responses) {
        set(ServingStatus.SERVING, responses);
    }

    private void set(ServingStatus requested, StreamObserver<DrainReply> responses) {
        // Ignored once health is in its terminal state (the shutdown drain): what counts is what it reports.
        health.setStatus(SERVICE, requested);
        ServingStatus effective = reported(SERVICE, requested);
        responses.onNext(DrainReply.newBuilder()
                .setPod(properties.podName())
                .setStatus(effective.name())
                .build());
        responses.onCompleted();
    }

    /**
     * What the health service answers a Check of {@code service} with: the status probes and
     * health-checking clients see. {@code fallback} only if the health service cannot be asked
     * in process (grpc-java's health service is an {@code AsyncService} whose Check answers at once).
     */
    private ServingStatus reported(String service, ServingStatus fallback) {
        if (!(health.getHealthService() instanceof HealthGrpc.AsyncService checks)) {
            return fallback;
        }
        AtomicReference<ServingStatus> reported = new AtomicReference<>(fallback);
        checks.check(HealthCheckRequest.newBuilder().setService(service).build(), new StreamObserver<>() {
            @Override
            public void onNext(HealthCheckResponse response) {
                reported.set(response.getStatus());
            }

            @Override
            public void onError(Throwable t) {
                // NOT_FOUND: the name is unknown, so nothing routes to it.
                reported.set(ServingStatus.SERVICE_UNKNOWN);
            }

            @Override
            public void onCompleted() {}
        });
        return reported.get();
    }
}
