package dev.grpcops.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Stopping a Spring gRPC service drains it first: a health watcher of the served name (a readiness
 * probe, a client-side health check) hears NOT_SERVING while the server still answers, before
 * Spring gRPC's own shutdown.
 */
@Timeout(60)
class DrainOnStopTests {

    @Test
    void aWatcherHearsNotServingBeforeTheServerStops() throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(
                        SpringGrpcStarterTests.StockApplication.class)
                .properties("spring.grpc.server.port=0", "grpcops.shutdown.drain-delay=300ms")
                .run();
        int port = context.getEnvironment().getRequiredProperty("local.grpc.server.port", Integer.class);
        ManagedChannel channel =
                ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        List<ServingStatus> heard = new CopyOnWriteArrayList<>();
        try {
            HealthGrpc.newStub(channel)
                    .watch(
                            HealthCheckRequest.newBuilder()
                                    .setService(StockGrpc.SERVICE_NAME)
                                    .build(),
                            new StreamObserver<>() {
                                @Override
                                public void onNext(HealthCheckResponse response) {
                                    heard.add(response.getStatus());
                                }

                                @Override
                                public void onError(Throwable closed) {}

                                @Override
                                public void onCompleted() {}
                            });
            await().atMost(Duration.ofSeconds(30)).until(() -> heard.contains(ServingStatus.SERVING));

            CompletableFuture<Void> stopping = CompletableFuture.runAsync(context::close);
            await().atMost(Duration.ofSeconds(30)).until(() -> heard.contains(ServingStatus.NOT_SERVING));
            stopping.get();

            assertThat(heard.subList(heard.indexOf(ServingStatus.SERVING), heard.size()))
                    .as("what the watcher heard once serving")
                    .containsSubsequence(ServingStatus.SERVING, ServingStatus.NOT_SERVING);
            assertThat(context.isActive()).isFalse();
        } finally {
            channel.shutdownNow();
            context.close();
        }
    }
}
