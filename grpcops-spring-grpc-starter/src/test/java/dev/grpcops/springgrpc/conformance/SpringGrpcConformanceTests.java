package dev.grpcops.springgrpc.conformance;

import dev.grpcops.spring.conformance.StarterConformance;
import java.util.List;

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
}
