package com.example.greeter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.example.greeter.v1.GreetReply;
import com.example.greeter.v1.GreetRequest;
import com.example.greeter.v1.GreeterGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The example as its users would check it: the application starts on Spring Boot 4 and Spring gRPC
 * with the starter and the few lines of application.yaml, and its calls get budgets, admission and a drain before stop.
 */
@Timeout(60)
class GreeterApplicationTests {

    private ConfigurableApplicationContext app;
    private ManagedChannel channel;

    @BeforeEach
    void start() {
        app = SpringApplication.run(
                GreeterApplication.class, "--spring.grpc.server.port=0", "--grpcops.shutdown.drain-delay=1s");
        int port = app.getEnvironment().getRequiredProperty("local.grpc.server.port", Integer.class);
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        if (app.isActive()) {
            app.close();
        }
    }

    private GreeterGrpc.GreeterBlockingStub greeter() {
        return GreeterGrpc.newBlockingStub(channel);
    }

    @Test
    void aCallGetsItsCallersDeadlineAsBudgetLessTheReserveDownstream() {
        GreetReply reply = greeter().withDeadlineAfter(1, TimeUnit.SECONDS)
                .greet(GreetRequest.newBuilder().setName("Ada").build());
        assertThat(reply.getMessage()).isEqualTo("Hello, Ada");
        assertThat(reply.getDefaultBudget()).isFalse();
        assertThat(reply.getBudgetRemainingMs()).isBetween(1L, 1000L);
        // The reserve (200 ms) plus what passed between the two readings on the real clock, which a
        // loaded machine can make tens of ms (once 211); GreeterServiceTimeTests holds it exactly.
        assertThat(reply.getBudgetRemainingMs() - reply.getDownstreamDeadlineMs()).isBetween(199L, 300L);
    }

    @Test
    void aCallWithoutADeadlineGetsTheDefaultBudget() {
        GreetReply reply = greeter().greet(GreetRequest.newBuilder().setName("Ada").build());
        assertThat(reply.getDefaultBudget()).isTrue();
        assertThat(reply.getBudgetRemainingMs()).isBetween(1000L, 2000L);
    }

    @Test
    void badInputIsInvalidArgumentNamingTheField() {
        StatusRuntimeException error = catchThrowableOfType(StatusRuntimeException.class,
                () -> greeter().greet(GreetRequest.getDefaultInstance()));
        assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(error.getStatus().getDescription()).isEqualTo("name: required");
    }

    @Test
    void callsPassAdmissionAndAreCounted() {
        greeter().greet(GreetRequest.newBuilder().setName("Ada").build());
        MeterRegistry meters = app.getBean(MeterRegistry.class);
        // grpcops.admission.limit: 64 seats, shared out over the priority levels
        double seats = meters.get("grpc.admission.limit.seats").gauges().stream().mapToDouble(gauge -> gauge.value()).sum();
        assertThat(seats).isBetween(64.0, 64.0 + 3);
        assertThat(meters.get("grpc.budget.remaining").tag("method", "greeter.v1.Greeter/Greet")
                .timer().count()).isEqualTo(1);
    }

    @Test
    void stoppingDrainsNotServingFirstWhileCallsStillSucceed() {
        HealthCheckRequest greeterHealth = HealthCheckRequest.newBuilder().setService("greeter.v1.Greeter").build();
        await().atMost(Duration.ofSeconds(10)).until(() ->
                HealthGrpc.newBlockingStub(channel).check(greeterHealth).getStatus() == ServingStatus.SERVING);

        CompletableFuture<Void> closing = CompletableFuture.runAsync(app::close);
        await().atMost(Duration.ofSeconds(5)).until(() ->
                HealthGrpc.newBlockingStub(channel).check(greeterHealth).getStatus() == ServingStatus.NOT_SERVING);
        // Draining: the load balancers stop sending, but what still arrives is served.
        assertThat(greeter().greet(GreetRequest.newBuilder().setName("late").build()).getMessage())
                .isEqualTo("Hello, late");
        closing.join();
    }
}
