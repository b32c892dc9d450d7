package dev.grpcops.pricing;

import dev.grpcops.proto.chain.v1.StockGrpc;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.client.inject.GrpcClientBean;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Quotes a SKU: price plus Stock's quantity, asked for within the deadline budget (design §5). */
@SpringBootApplication
@ConfigurationPropertiesScan
@GrpcClientBean(clazz = StockGrpc.StockFutureStub.class, client = @GrpcClient("stock"))
public class PricingApplication {

    public static void main(String[] args) {
        SpringApplication.run(PricingApplication.class, args);
    }
}
