package dev.grpcops.edge;

import dev.grpcops.proto.chain.v1.PricingGrpc;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.client.inject.GrpcClientBean;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Checkout: every SKU quoted at once under one budget, answered with the lines it has (design §5). */
@SpringBootApplication
@ConfigurationPropertiesScan
@GrpcClientBean(clazz = PricingGrpc.PricingFutureStub.class, client = @GrpcClient("pricing"))
public class EdgeApplication {

    public static void main(String[] args) {
        SpringApplication.run(EdgeApplication.class, args);
    }
}
