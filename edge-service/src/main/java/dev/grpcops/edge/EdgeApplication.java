package dev.grpcops.edge;

import dev.grpcops.admission.CallWidth;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.client.inject.GrpcClientBean;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;

/** Checkout: every SKU quoted at once under one budget, answered with the lines it has (design §5). */
@SpringBootApplication
@ConfigurationPropertiesScan
@GrpcClientBean(clazz = PricingGrpc.PricingFutureStub.class, client = @GrpcClient("pricing"))
public class EdgeApplication {

    /**
     * A Checkout takes a seat at admission per Quote it makes (its distinct SKUs, at most max-skus):
     * a caller's fan-out, and the cancellations it brings to Pricing, stay within its fair share.
     */
    @Bean
    CallWidth<CheckoutRequest> checkoutWidth(EdgeProperties properties) {
        return CallWidth.of(EdgeGrpc.getCheckoutMethod(), request -> (int) Math.min(
                properties.maxSkus(), request.getSkusList().stream().distinct().count()));
    }

    public static void main(String[] args) {
        SpringApplication.run(EdgeApplication.class, args);
    }
}
