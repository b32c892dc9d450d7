package dev.grpcops.spring.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.retry.RetryOutcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class MicrometerRetryListenerTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MicrometerRetryListener listener = new MicrometerRetryListener(registry);

    @Test
    void recordsOutcomesAndTokensUnderTheirNames() {
        listener.outcome("stock:50061", RetryOutcome.THROTTLED);
        listener.outcome("stock:50061", RetryOutcome.THROTTLED);
        listener.outcome("stock:50061", RetryOutcome.PUSHBACK);
        listener.outcome("stock:50061", RetryOutcome.ATTEMPTED);
        double[] tokens = {10};
        listener.tokens("stock:50061", () -> tokens[0]);
        tokens[0] = 4.5;

        assertThat(registry.get("grpc.budget.retries")
                        .tag("outcome", "throttled")
                        .counter()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("grpc.budget.retries")
                        .tag("outcome", "pushback")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.budget.retries")
                        .tag("outcome", "attempted")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.budget.retries")
                        .tag("outcome", "refused")
                        .counter()
                        .count())
                .isZero();
        assertThat(registry.get("grpc.retry.tokens")
                        .tag("target", "stock:50061")
                        .gauge()
                        .value())
                .isEqualTo(4.5);
    }

    @Test
    void countsHedgesPerTargetAndOutcome() {
        listener.hedgeable("stock:50061");
        listener.hedgeable("stock:50061");
        listener.hedge("stock:50061", dev.grpcops.retry.HedgeOutcome.SENT);
        listener.hedge("stock:50061", dev.grpcops.retry.HedgeOutcome.WON);
        listener.hedge("pricing:50062", dev.grpcops.retry.HedgeOutcome.THROTTLED);

        assertThat(registry.get("grpc.hedgeable.calls")
                        .tag("target", "stock:50061")
                        .counter()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("grpc.hedges")
                        .tags("target", "stock:50061", "outcome", "sent")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.hedges")
                        .tags("target", "stock:50061", "outcome", "won")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.hedges")
                        .tags("target", "pricing:50062", "outcome", "throttled")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void gaugesTheHedgeDelayPerTargetInSeconds() {
        double[] seconds = {Double.NaN};
        listener.hedgeDelay("stock:50061", () -> seconds[0]);
        assertThat(registry.get("grpc.hedge.delay")
                        .tag("target", "stock:50061")
                        .gauge()
                        .value())
                .isNaN();
        seconds[0] = 0.0042;
        assertThat(registry.get("grpc.hedge.delay")
                        .tag("target", "stock:50061")
                        .gauge()
                        .value())
                .isEqualTo(0.0042);
    }

    /**
     * A hedged call through a channel no attempt interceptor names (its target unknown): the call
     * goes through and the counters say "unknown", instead of a failure out of {@code hedged()}
     * (which, in Edge, held a Quote permit for ever).
     */
    @Test
    void aCallWhoseTargetNoInterceptorNamedIsCountedAsUnknown() throws Exception {
        dev.grpcops.retry.Retry retry = dev.grpcops.retry.Retry.builder(dev.grpcops.budget.BudgetRules.DEFAULTS)
                .hedging(dev.grpcops.retry.Hedging.DEFAULTS)
                .listener(listener)
                .build();
        assertThat(retry.hedged(() -> com.google.common.util.concurrent.Futures.immediateFuture("answer"))
                        .get())
                .isEqualTo("answer");
        assertThat(registry.get("grpc.hedgeable.calls")
                        .tag("target", "unknown")
                        .counter()
                        .count())
                .isEqualTo(1);
    }
}
