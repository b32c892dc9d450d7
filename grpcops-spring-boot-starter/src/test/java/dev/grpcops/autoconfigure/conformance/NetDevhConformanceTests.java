package dev.grpcops.autoconfigure.conformance;

import dev.grpcops.spring.conformance.StarterConformance;
import java.util.List;

/** The conformance suite against this starter, on net.devh and Spring Boot 3. */
class NetDevhConformanceTests extends StarterConformance {

    @Override
    protected Class<?> application() {
        return NetDevhConformanceApplication.class;
    }

    @Override
    protected List<String> serveOn(int port) {
        return List.of(
                "grpc.server.port=" + port,
                "grpc.client.stock.address=static://127.0.0.1:" + port,
                "grpc.client.stock.negotiation-type=plaintext");
    }

    @Override
    protected List<String> exportTracesTo(String endpoint) {
        return List.of(
                "management.otlp.tracing.endpoint=" + endpoint,
                "management.tracing.sampling.probability=1.0",
                "management.tracing.opentelemetry.export.schedule-delay=100ms");
    }
}
