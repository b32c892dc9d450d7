package dev.grpcops.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.within;

import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** SPEC §4 over real gRPC: what the next hop receives, and the call that is never sent. */
class BudgetPropagationTests {

    private static final QuoteRequest QUOTE = QuoteRequest.newBuilder().setSku("a").build();

    private InProcessChain chain;

    @BeforeEach
    void start() throws Exception {
        chain = new InProcessChain(BudgetRules.DEFAULTS, false);
    }

    @AfterEach
    void stop() throws InterruptedException {
        chain.close();
    }

    @Test
    void oneSecondQuoteHandsStockEightHundredMillis() {
        chain.pricing().withDeadlineAfter(1, TimeUnit.SECONDS).quote(QUOTE);

        assertThat(chain.stockReceived).singleElement().satisfies(s -> assertThat(s).isCloseTo(0.8, within(0.05)));
        assertThat(chain.registry.get("grpc.budget.remaining").tag("method", "chain.v1.Pricing/Quote").timer()
                .max(TimeUnit.MILLISECONDS)).isCloseTo(1000, within(50.0));
        assertThat(chain.registry.get("grpc.budget.downstream").tag("method", "chain.v1.Stock/Check").timer()
                .count()).isEqualTo(1);
        assertThat(chain.counter("grpc.budget.default.applied")).isZero();
    }

    @Test
    void quoteWithoutDeadlineHandsStockTheDefaultMinusReserve() {
        chain.pricing().quote(QUOTE);

        assertThat(chain.stockReceived).singleElement().satisfies(s -> assertThat(s).isCloseTo(1.8, within(0.05)));
        assertThat(chain.counter("grpc.budget.default.applied", "method", "chain.v1.Pricing/Quote")).isEqualTo(1);
    }

    @Test
    void quoteThatCannotCoverTheReserveIsRefusedWithoutCallingStock() {
        long started = System.nanoTime();
        StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                () -> chain.pricing().withDeadlineAfter(450, TimeUnit.MILLISECONDS).quote(QUOTE));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(refused.getStatus().getDescription())
                .matches("chain\\.v1\\.Stock/Check not sent: budget left 0\\.[0-4]\\d\\d s, minus reserve 0\\.200 s"
                        + " = -?0\\.\\d{3} s, below the 0\\.300 s needed downstream \\(grpcops\\.budget\\.min-downstream\\)");
        assertThat(took).as("fails at once, not at the deadline").isLessThan(Duration.ofMillis(300));
        assertThat(chain.stockCalls()).isZero();
        assertThat(chain.counter("grpc.budget.insufficient", "method", "chain.v1.Stock/Check")).isEqualTo(1);
    }

    @Test
    void callsMadeOutsideAServedCallKeepTheirOwnDeadline() {
        // No budget in context: the interceptor leaves the options alone (here: no deadline at all).
        assertThat(Budget.current()).isEmpty();
        chain.pricing().quote(QUOTE);
        assertThat(chain.registry.get("grpc.budget.downstream").timer().count()).isEqualTo(1);
    }
}
