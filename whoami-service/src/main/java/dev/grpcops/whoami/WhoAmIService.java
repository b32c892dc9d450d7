package dev.grpcops.whoami;

import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import net.devh.boot.grpc.server.service.GrpcService;

/**
 * Drain flips only this service's health name, which readiness probes and health-checking
 * clients watch; {@code ""}, which liveness watches, never changes, so a drained pod keeps
 * running and is not restarted.
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

    private void set(ServingStatus status, StreamObserver<DrainReply> responses) {
        health.setStatus(SERVICE, status);
        responses.onNext(DrainReply.newBuilder().setPod(properties.podName()).setStatus(status.name()).build());
        responses.onCompleted();
    }
}
