package dev.grpcops.springgrpc.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.spring.conformance.StarterConformance;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The conformance suite against this starter, on Spring gRPC and Spring Boot 4. */
class SpringGrpcConformanceTests extends StarterConformance {

    @Override
    protected Class<?> application() {
        return SpringGrpcConformanceApplication.class;
    }

    @Override
    protected List<String> serveOn(int port) {
        return List.of("spring.grpc.server.port=" + port, "spring.grpc.client.channel.stock.target=127.0.0.1:" + port);
    }

    @Override
    protected List<String> exportTracesTo(String endpoint) {
        return List.of(
                "management.opentelemetry.tracing.export.otlp.endpoint=" + endpoint,
                "management.tracing.sampling.probability=1.0",
                "management.opentelemetry.tracing.export.schedule-delay=100ms");
    }

    @Test
    void springGrpcsObservationsRecordTheirTimersWhileTheLibraryMakesTheSpans() {
        MeterRegistry meters = running().getBean(MeterRegistry.class);
        double quotesBefore = timed(meters, "grpc.server", "Quote");
        double checksSentBefore = timed(meters, "grpc.client", "Check");

        PricingGrpc.newBlockingStub(channel())
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("observed").build());

        // Each is recorded as its call closes, which may be just after the answer reached the test.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(timed(meters, "grpc.server", "Quote"))
                    .as("grpc.server: the Quote served")
                    .isEqualTo(quotesBefore + 1);
            assertThat(timed(meters, "grpc.client", "Check"))
                    .as("grpc.client: Pricing's Check to Stock")
                    .isEqualTo(checksSentBefore + 1);
        });
    }

    /** Calls of {@code method} that Spring gRPC's observation {@code timer} (grpc.server, grpc.client) has timed. */
    private static double timed(MeterRegistry meters, String timer, String method) {
        return meters.find(timer).tag("rpc.method", method).timers().stream()
                .mapToDouble(Timer::count)
                .sum();
    }
}
