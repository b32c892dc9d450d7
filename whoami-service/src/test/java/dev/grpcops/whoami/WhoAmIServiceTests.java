package dev.grpcops.whoami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=whoami-test",
            "grpc.server.port=-1",
            "grpc.client.whoami.address=in-process:whoami-test",
            "management.server.port=-1",
            "POD_NAME=w7",
            "grpcops.admin.token=whoami-test-token",
            // Nothing here tests the drain; without this each context close would wait the default 5 s.
            "grpcops.shutdown.drain-delay=0s",
        })
class WhoAmIServiceTests {

    private static final String SERVICE = "grpcops.v1.WhoAmI";

    @GrpcClient("whoami")
    private WhoAmIGrpc.WhoAmIBlockingStub whoami;

    @GrpcClient("whoami")
    private HealthGrpc.HealthBlockingStub health;

    @GrpcClient("whoami")
    private HealthGrpc.HealthStub healthAsync;

    /** Watch streams never end by themselves: the test ends them, as a client that leaves would. */
    private final Context.CancellableContext watches = Context.current().withCancellation();

    @AfterEach
    void resume() {
        watches.cancel(null);
        admin("whoami-test-token").resume(DrainRequest.getDefaultInstance());
    }

    @Test
    void whoAnswersThePodName() {
        assertThat(whoami.who(WhoRequest.getDefaultInstance()).getPod()).isEqualTo("w7");
    }

    @Test
    void bothHealthNamesStartServingAndOthersAreNotFound() {
        assertThat(check("")).isEqualTo(ServingStatus.SERVING);
        assertThat(check(SERVICE)).isEqualTo(ServingStatus.SERVING);
        StatusRuntimeException unknown =
                catchThrowableOfType(StatusRuntimeException.class, () -> check("nope.v1.Nope"));
        assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        // The services the library brings along (fault injection's admin service here) get no name of their own.
        StatusRuntimeException faults =
                catchThrowableOfType(StatusRuntimeException.class, () -> check("grpcops.v1.Faults"));
        assertThat(faults.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    }

    @Test
    void drainFlipsReadinessOnlyAndResumeFlipsItBack() {
        var drained = admin("whoami-test-token").drain(DrainRequest.getDefaultInstance());
        assertThat(drained.getPod()).isEqualTo("w7");
        assertThat(drained.getStatus()).isEqualTo("NOT_SERVING");
        assertThat(check(SERVICE)).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(check("")).as("liveness never changes").isEqualTo(ServingStatus.SERVING);
        assertThat(whoami.who(WhoRequest.getDefaultInstance()).getPod())
                .as("still answering")
                .isEqualTo("w7");

        assertThat(admin("whoami-test-token")
                        .resume(DrainRequest.getDefaultInstance())
                        .getStatus())
                .isEqualTo("SERVING");
        assertThat(check(SERVICE)).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void drainWithoutTheTokenChangesNothing() {
        StatusRuntimeException missing = catchThrowableOfType(
                StatusRuntimeException.class, () -> whoami.drain(DrainRequest.getDefaultInstance()));
        assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        StatusRuntimeException wrong = catchThrowableOfType(
                StatusRuntimeException.class, () -> admin("guess").drain(DrainRequest.getDefaultInstance()));
        assertThat(wrong.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(check(SERVICE)).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void watchSendsTheCurrentStatusThenEveryChange() throws Exception {
        BlockingQueue<Object> updates = watch(SERVICE);
        assertThat(updates.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.SERVING);

        admin("whoami-test-token").drain(DrainRequest.getDefaultInstance());
        assertThat(updates.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.NOT_SERVING);
        admin("whoami-test-token").resume(DrainRequest.getDefaultInstance());
        assertThat(updates.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void watchOfAnUnknownNameSaysServiceUnknownAndStaysOpen() throws Exception {
        BlockingQueue<Object> updates = watch("nope.v1.Nope");
        assertThat(updates.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.SERVICE_UNKNOWN);
        // Elapsed time is the point: nothing (no error, no end) arrives for a while after the status.
        assertThat(updates.poll(500, TimeUnit.MILLISECONDS))
                .as("no error, no end: the stream stays open")
                .isNull();
    }

    private BlockingQueue<Object> watch(String service) {
        BlockingQueue<Object> updates = new LinkedBlockingQueue<>();
        watches.run(() -> healthAsync.watch(
                HealthCheckRequest.newBuilder().setService(service).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(HealthCheckResponse response) {
                        updates.add(response.getStatus());
                    }

                    @Override
                    public void onError(Throwable t) {
                        updates.add(t);
                    }

                    @Override
                    public void onCompleted() {
                        updates.add("completed");
                    }
                }));
        return updates;
    }

    private ServingStatus check(String service) {
        return health.check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }

    private WhoAmIGrpc.WhoAmIBlockingStub admin(String token) {
        return whoami.withInterceptors(AdminCredentials.bearer(token));
    }
}
