package dev.grpcops.springgrpc.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.spring.conformance.StarterConformance;
import io.micrometer.core.instrument.MeterRegistry;
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
        double quotesBefore = served(meters, "Quote");
        double checksSentBefore = sent(meters, "Check");

        PricingGrpc.newBlockingStub(channel())
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("observed").build());

        // Each is recorded as its call closes, which may be just after the answer reached the test.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(served(meters, "Quote")).as("grpc.server: the Quote served").isEqualTo(quotesBefore + 1);
            assertThat(sent(meters, "Check"))
                    .as("grpc.client: Pricing's Check to Stock")
                    .isEqualTo(checksSentBefore + 1);
        });
    }

    private static double served(MeterRegistry meters, String method) {
        return meters.find("grpc.server").tag("rpc.method", method).timers().stream()
                .mapToDouble(timer -> timer.count())
                .sum();
    }

    private static double sent(MeterRegistry meters, String method) {
        return meters.find("grpc.client").tag("rpc.method", method).timers().stream()
                .mapToDouble(timer -> timer.count())
                .sum();
    }
}
