package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.testing.InProcessChain;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** design §4 over real gRPC: what the next hop receives, and the call that is never sent. */
class BudgetPropagationTests {

    private static final QuoteRequest QUOTE =
            QuoteRequest.newBuilder().setSku("a").build();

    private InProcessChain chain;

    @BeforeEach
    void start() throws Exception {
        chain = InProcessChain.builder(BudgetRules.DEFAULTS).retries().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        chain.close();
    }

    @Test
    void oneSecondQuoteHandsStockEightHundredMillis() {
        chain.pricing().withDeadlineAfter(1, TimeUnit.SECONDS).quote(QUOTE);

        // A budget only shrinks on its way: at most the caller's 1 s minus the 0.2 s reserve, and
        // whatever the machine's speed, far more than what is left of it once it has spent half.
        assertThat(chain.stockArrivals)
                .extracting(InProcessChain.Arrival::deadlineSeconds)
                .singleElement()
                .satisfies(s -> assertThat(s).isBetween(0.5, 0.8));
        assertThat(chain.pricingListener.arrivals).singleElement().satisfies(arrival -> {
            assertThat(arrival.method()).isEqualTo("chain.v1.Pricing/Quote");
            assertThat(arrival.remaining().toMillis()).isBetween(700L, 1000L);
            assertThat(arrival.defaulted()).isFalse();
        });
        assertThat(chain.pricingListener.downstream)
                .singleElement()
                .satisfies(sent -> assertThat(sent.method()).isEqualTo("chain.v1.Stock/Check"));
    }

    @Test
    void quoteWithoutDeadlineHandsStockTheDefaultMinusReserve() {
        chain.pricing().quote(QUOTE);

        assertThat(chain.stockArrivals)
                .extracting(InProcessChain.Arrival::deadlineSeconds)
                .singleElement()
                .satisfies(s -> assertThat(s).isBetween(1.5, 1.8));
        assertThat(chain.pricingListener.arrivals).singleElement().satisfies(arrival -> {
            assertThat(arrival.method()).isEqualTo("chain.v1.Pricing/Quote");
            assertThat(arrival.defaulted()).isTrue();
        });
    }

    @Test
    void quoteThatCannotCoverTheReserveIsRefusedWithoutCallingStock() {
        StatusRuntimeException refused = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> chain.pricing()
                        .withDeadlineAfter(450, TimeUnit.MILLISECONDS)
                        .quote(QUOTE));

        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(refused.getStatus().getDescription())
                .matches("chain\\.v1\\.Stock/Check not sent: budget left 0\\.[0-4]\\d\\d s, minus reserve 0\\.200 s"
                        + " = -?0\\.\\d{3} s, below the 0\\.300 s needed downstream \\(the min-downstream rule\\)");
        // Refused by the budget, at once: a call that waited out the deadline would end with gRPC's message.
        assertThat(chain.stockCalls()).isZero();
        assertThat(chain.pricingListener.notSent).containsExactly("chain.v1.Stock/Check");
    }

    @Test
    void callsMadeOutsideAServedCallKeepTheirOwnDeadline() {
        // No budget in context: the interceptor leaves the options alone (here: no deadline at all).
        assertThat(Budget.current()).isEmpty();
        chain.pricing().quote(QUOTE);
        assertThat(chain.pricingListener.downstream).hasSize(1);
    }
}
