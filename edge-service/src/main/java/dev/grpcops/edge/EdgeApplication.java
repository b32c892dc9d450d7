package dev.grpcops.edge;

import dev.grpcops.admission.CallWidth;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import java.util.HashSet;
import java.util.List;
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
     * A Checkout takes a seat at admission per Quote it makes (its distinct SKUs): a caller's
     * fan-out, and the cancellations it brings to Pricing, stay within its fair share.
     */
    @Bean
    CallWidth<CheckoutRequest> checkoutWidth(EdgeProperties properties) {
        int maxSkus = properties.maxSkus();
        return CallWidth.of(EdgeGrpc.getCheckoutMethod(), request -> seats(request, maxSkus));
    }

    /**
     * The Quotes {@code request} makes; one for a request the handler refuses for its size (more
     * SKUs or slow SKUs than max-skus), which is answered at once and makes none. Its size is looked
     * at before its SKUs are.
     */
    static int seats(CheckoutRequest request, int maxSkus) {
        int skus = request.getSkusCount();
        if (skus > maxSkus || request.getSlowSkusCount() > maxSkus) {
            return 1;
        }
        if (skus <= 1) {
            return 1;
        }
        List<String> list = request.getSkusList();
        if (skus > 16) {
            return new HashSet<>(list).size();
        }
        // Read for every Checkout: the usual few SKUs compared pairwise, without a stream or a set.
        int distinct = 0;
        for (int i = 0; i < skus; i++) {
            if (list.indexOf(list.get(i)) == i) {
                distinct++;
            }
        }
        return distinct;
    }

    public static void main(String[] args) {
        SpringApplication.run(EdgeApplication.class, args);
    }
}
