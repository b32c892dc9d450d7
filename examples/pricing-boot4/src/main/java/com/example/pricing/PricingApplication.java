package com.example.pricing;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.client.GrpcChannelFactory;

/** Pricing on Spring Boot 4 and Spring gRPC; grpcops comes with the starter on the classpath. */
@SpringBootApplication
public class PricingApplication {

    public static void main(String[] args) {
        SpringApplication.run(PricingApplication.class, args);
    }

    @Bean
    PricingService pricing(GrpcChannelFactory channels) {
        return new PricingService(() -> channels.createChannel("stock"));
    }
}
