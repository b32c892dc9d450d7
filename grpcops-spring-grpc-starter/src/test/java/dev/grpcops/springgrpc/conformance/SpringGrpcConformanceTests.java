package dev.grpcops.springgrpc.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.spring.conformance.StarterConformance;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
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
        StockGrpc.newBlockingStub(channel())
                .check(CheckRequest.newBuilder().setSku("observed").build());

        MeterRegistry meters = running().getBean(MeterRegistry.class);
        assertThat(meters.get("grpc.server").tag("rpc.method", "Check").timer().count())
                .isPositive();
    }
}
