package dev.grpcops.autoconfigure.conformance;

import dev.grpcops.spring.conformance.ConformanceServices;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.server.service.GrpcService;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/** The conformance suite's services on net.devh: Pricing asks Stock through net.devh's channel "stock". */
@SpringBootApplication
public class NetDevhConformanceApplication {

    @Bean
    @GrpcService
    ConformanceServices.RecordingStock stock() {
        return new ConformanceServices.RecordingStock();
    }

    @Bean
    @GrpcService
    ConformanceServices.ForwardingPricing pricing(GrpcChannelFactory channels) {
        return new ConformanceServices.ForwardingPricing(() -> channels.createChannel("stock"));
    }
}
