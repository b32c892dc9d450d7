package dev.grpcops.whoami;

import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import dev.grpcops.spring.shutdown.ServiceReadiness;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.stub.StreamObserver;
import net.devh.boot.grpc.server.service.GrpcService;

/**
 * Drain flips only this service's health name, which readiness probes and health-checking
 * clients watch; {@code ""}, which liveness watches, never changes, so a drained pod keeps
 * running and is not restarted. Drain and Resume answer the status health reports after the
 * change: during the warm-up, and once the shutdown drain has begun (health's terminal state, where
 * every name stays {@code NOT_SERVING}), Resume answers {@code NOT_SERVING}; a drain during the
 * warm-up holds after it.
 */
@GrpcService
class WhoAmIService extends WhoAmIGrpc.WhoAmIImplBase {

    static final String SERVICE = WhoAmIGrpc.SERVICE_NAME;

    private final ServiceReadiness readiness;
    private final WhoAmIProperties properties;

    WhoAmIService(ServiceReadiness readiness, WhoAmIProperties properties) {
        this.readiness = readiness;
        this.properties = properties;
    }

    @Override
    public void who(WhoRequest request, StreamObserver<WhoReply> responses) {
        responses.onNext(WhoReply.newBuilder().setPod(properties.podName()).build());
        responses.onCompleted();
    }

    @Override
    public void drain(DrainRequest request, StreamObserver<DrainReply> responses) {
        answer(readiness.drain(SERVICE), responses);
    }

    @Override
    public void resume(DrainRequest request, StreamObserver<DrainReply> responses) {
        answer(readiness.resume(SERVICE), responses);
    }

    /** What health reports after the change: what probes and health-checking clients see. */
    private void answer(ServingStatus reported, StreamObserver<DrainReply> responses) {
        responses.onNext(DrainReply.newBuilder()
                .setPod(properties.podName())
                .setStatus(reported.name())
                .build());
        responses.onCompleted();
    }
}
