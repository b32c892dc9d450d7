package dev.grpcops.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.spring.conformance.ConformanceServices;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.grpc.test.autoconfigure.LocalGrpcServerPort;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * The starter on Spring Boot 4 and Spring gRPC, as a service would have it: a Stock service served
 * by Spring gRPC's Netty server, called over loopback, and a channel made by Spring gRPC's channel
 * factory, one hop downstream. What a user checks: the budget the server gave a call, the health names, the metrics,
 * the drain, the balancing a channel gets.
 */
@SpringBootTest(
        properties = {
            "spring.grpc.server.port=0",
            "spring.grpc.client.channel.stock.target=127.0.0.1:${local.grpc.server.port}",
            "grpcops.shutdown.drain-delay=0s"
        })
@Timeout(60)
class SpringGrpcStarterTests {

    /** No component scan: the conformance suite's application, in a package below, is its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class StockApplication {

        @Bean
        ConformanceServices.RecordingStock stock() {
            return new ConformanceServices.RecordingStock();
        }

        @Bean
        ConformanceServices.ForwardingPricing pricing(GrpcChannelFactory channels) {
            return new ConformanceServices.ForwardingPricing(() -> channels.createChannel("stock"));
        }
    }

    @LocalGrpcServerPort
    int port;

    @Autowired
    ConformanceServices.RecordingStock stock;

    @Autowired
    ApplicationContext context;

    @Autowired
    MeterRegistry meters;

    private ManagedChannel channel;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    }

    @AfterEach
    void disconnect() {
        channel.shutdownNow();
    }

    @Test
    void aCallWithoutDeadlineIsServedUnderTheDefaultBudgetAndCounted() {
        StockGrpc.newBlockingStub(channel).check(CheckRequest.newBuilder().setSku("a").build());

        long remaining = stock.lastRemainingMillis();
        assertThat(remaining).as("ms left of the 2 s default budget").isBetween(1L, 2_000L);
        assertThat(meters.find("grpc.budget.default.applied").counter())
                .as("grpc_budget_default_applied_total")
                .isNotNull();
        assertThat(meters.find("grpc.budget.default.applied").counter().count()).isPositive();
    }

    @Test
    void everyServedServiceIsInHealthAndServingOnceStartedAndActuatorSaysSo() {
        HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () -> health.check(HealthCheckRequest.newBuilder()
                                        .setService(StockGrpc.SERVICE_NAME)
                                        .build())
                                .getStatus(),
                        status -> status == ServingStatus.SERVING);
        HealthIndicator grpcServing = context.getBean("grpcServingHealthIndicator", HealthIndicator.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> grpcServing.health().getStatus() == Status.UP);
        assertThat(grpcServing.health().getDetails()).containsEntry(StockGrpc.SERVICE_NAME, "SERVING");
    }

    @Test
    void theLibrarysLayersAreSpringGrpcsGlobalInterceptorsAroundItsObservation() {
        Map<String, Object> global = context.getBeansWithAnnotation(
                org.springframework.grpc.server.GlobalServerInterceptor.class);
        assertThat(global)
                .containsKeys(
                        "grpcopsAdminAuthorizationInterceptor",
                        "grpcopsWarmUpMark",
                        "grpcopsBudgetServerInterceptor",
                        "grpcopsAdmissionInterceptor",
                        "grpcopsFaultInterceptor",
                        "inFlightCalls");
        assertThat(context.getBeansWithAnnotation(org.springframework.grpc.client.GlobalClientInterceptor.class))
                .containsKeys(
                        "grpcopsRetryAttemptInterceptor",
                        "grpcopsBudgetClientInterceptor",
                        "grpcopsCallerForwardingInterceptor");
        assertThat(context.getBeansOfType(DrainBeforeStop.class)).hasSize(1);
    }

    @Test
    void aDownstreamCallOnSpringGrpcsChannelGetsTheRemainingBudgetLessTheReserve() {
        // The first Quote makes Pricing's channel to Stock and loads its classes: not what is measured.
        PricingGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("warm").build());
        QuoteReply reply = PricingGrpc.newBlockingStub(channel)
                .withDeadlineAfter(1, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("b").build());

        assertThat(reply.getSku()).isEqualTo("b");
        long remaining = stock.lastRemainingMillis();
        assertThat(remaining).as("ms Stock had of the caller's 1 s, less Pricing's 200 ms reserve").isBetween(1L, 800L);
        assertThat(meters.find("grpc.budget.downstream").meter())
                .as("grpc_budget_downstream_seconds: the budget layer on Spring gRPC's channel")
                .isNotNull();
        assertThat(meters.find("grpc.client.picks.passed.over").tag("channel", "stock").meters())
                .as("the balancing metrics of the channel named stock")
                .isNotEmpty();
    }
}
