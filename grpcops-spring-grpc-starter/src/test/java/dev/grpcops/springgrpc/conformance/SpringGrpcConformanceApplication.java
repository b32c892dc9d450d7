package dev.grpcops.springgrpc.conformance;

import dev.grpcops.spring.conformance.ConformanceServices;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.client.GrpcChannelFactory;

/** The conformance suite's services on Spring gRPC: Pricing asks Stock through Spring gRPC's channel "stock". */
@SpringBootApplication
public class SpringGrpcConformanceApplication {

    @Bean
    ConformanceServices.RecordingStock stock() {
        return new ConformanceServices.RecordingStock();
    }

    @Bean
    ConformanceServices.ForwardingPricing pricing(GrpcChannelFactory channels) {
        return new ConformanceServices.ForwardingPricing(() -> channels.createChannel("stock"));
    }
}
