package dev.grpcops.spring.shutdown;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A service's readiness in the health service, from the moment the server listens (design §16). */
class ServiceReadinessTests {

    private static final String SERVICE = "grpcops.v1.WhoAmI";

    private final HealthStatusManager health = new HealthStatusManager();
    private final ServiceReadiness readiness = new ServiceReadiness(health);

    @Test
    void aServiceStillWarmingUpIsKnownAndNotServing() {
        assertThat(readiness.reported(SERVICE))
                .as("before the server listens")
                .isEqualTo(ServingStatus.SERVICE_UNKNOWN);
        readiness.starting(List.of(SERVICE));
        assertThat(readiness.reported(SERVICE))
                .as("warming up: not ready, but a known service (not NOT_FOUND)")
                .isEqualTo(ServingStatus.NOT_SERVING);
        readiness.warmedUp(List.of(SERVICE));
        assertThat(readiness.reported(SERVICE)).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void aDrainDuringTheWarmUpHoldsAfterIt() {
        readiness.starting(List.of(SERVICE));
        assertThat(readiness.drain(SERVICE)).isEqualTo(ServingStatus.NOT_SERVING);
        readiness.warmedUp(List.of(SERVICE));
        assertThat(readiness.reported(SERVICE)).as("still drained").isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(readiness.resume(SERVICE)).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void aResumeDuringTheWarmUpWaitsForItsEnd() {
        readiness.starting(List.of(SERVICE));
        readiness.drain(SERVICE);
        assertThat(readiness.resume(SERVICE)).as("not ready yet").isEqualTo(ServingStatus.NOT_SERVING);
        readiness.warmedUp(List.of(SERVICE));
        assertThat(readiness.reported(SERVICE)).isEqualTo(ServingStatus.SERVING);
    }

    /**
     * A watcher of a service still warming up hears NOT_SERVING, and a drain then (the shutdown's,
     * or an operator's) keeps it so: the warm-up's end never flips it to SERVING.
     */
    @Test
    void aDrainDuringTheWarmUpKeepsWatchersAtNotServing() {
        readiness.starting(List.of(SERVICE, "other"));
        List<ServingStatus> heard = watch(SERVICE);
        List<ServingStatus> heardOther = watch("other");

        readiness.drain(SERVICE);
        readiness.warmedUp(List.of(SERVICE, "other"));
        assertThat(heard).as("drained by an operator during the warm-up").containsExactly(ServingStatus.NOT_SERVING);
        assertThat(heardOther).containsExactly(ServingStatus.NOT_SERVING, ServingStatus.SERVING);

        health.enterTerminalState();
        assertThat(heardOther).as("the shutdown drain").endsWith(ServingStatus.NOT_SERVING);
    }

    /** The shutdown drain while still warming up: watchers never hear SERVING. */
    @Test
    void theShutdownDrainDuringTheWarmUpIsFinal() {
        readiness.starting(List.of(SERVICE));
        List<ServingStatus> heard = watch(SERVICE);

        health.enterTerminalState();
        readiness.warmedUp(List.of(SERVICE));

        assertThat(heard).containsOnly(ServingStatus.NOT_SERVING);
        assertThat(readiness.reported(SERVICE)).isEqualTo(ServingStatus.NOT_SERVING);
    }

    /** What a watcher of {@code service} hears from now on. */
    private List<ServingStatus> watch(String service) {
        List<ServingStatus> heard = new CopyOnWriteArrayList<>();
        ((HealthGrpc.HealthImplBase) health.getHealthService())
                .watch(HealthCheckRequest.newBuilder().setService(service).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(HealthCheckResponse response) {
                        heard.add(response.getStatus());
                    }

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        return heard;
    }
}
