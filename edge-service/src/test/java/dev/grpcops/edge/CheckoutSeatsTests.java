package dev.grpcops.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.proto.chain.v1.CheckoutRequest;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The seats a Checkout takes at admission: one per Quote it makes, one for a request refused for its size. */
class CheckoutSeatsTests {

    @ParameterizedTest(name = "{0} SKUs ({1} distinct), {2} slow: {3} seats")
    @CsvSource({
        // skus, distinct, slow, seats
        "1, 1, 0, 1",
        "4, 4, 0, 4",
        "6, 2, 0, 2",
        "100, 100, 0, 100",
        "101, 101, 0, 1", // refused by the handler for its size: it makes no Quote
        "1000, 1000, 0, 1",
        "3, 3, 101, 1",
        "0, 0, 0, 1",
        "17, 17, 0, 17", // more SKUs than are compared pairwise
        "40, 20, 0, 20",
    })
    void aCheckoutTakesASeatPerQuoteItMakes(int skus, int distinct, int slow, int seats) {
        CheckoutRequest.Builder request = CheckoutRequest.newBuilder();
        for (int i = 0; i < skus; i++) {
            request.addSkus("sku-" + (i % Math.max(1, distinct)));
        }
        request.addAllSlowSkus(Collections.nCopies(slow, "slow"));
        assertThat(EdgeApplication.seats(request.build(), 100)).isEqualTo(seats);
    }

    @ParameterizedTest(name = "max-skus {0}")
    @CsvSource({"1", "10"})
    void aRequestOverMaxSkusIsNeverWiderThanOneSeat(int maxSkus) {
        CheckoutRequest request = CheckoutRequest.newBuilder()
                .addAllSkus(List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"))
                .build();
        assertThat(EdgeApplication.seats(request, maxSkus)).isEqualTo(1);
    }
}
