package dev.grpcops.containers;

import static dev.grpcops.testsupport.OtlpReceiver.ms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.testsupport.OtlpReceiver;
import dev.grpcops.testsupport.OtlpReceiver.CheckoutHops;
import dev.grpcops.testsupport.OtlpReceiver.ReceivedSpan;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Traces from the images, configured as docker-compose.yml configures them: the OpenTelemetry
 * environment variables alone ({@code OTEL_EXPORTER_OTLP_ENDPOINT}, {@code OTEL_TRACES_SAMPLER_ARG}),
 * exporting from the Compose suite into a receiver in this test. One Checkout through the three
 * containers is one trace, parented hop by hop, with the budget at every hop.
 */
@ExtendWith(ComposeSuite.Resolver.class)
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TracingContainersIT {

    /** The most a loaded machine may spend between two readings of one call's budget, in ms. */
    private static final double SPENT_BETWEEN_HOPS_MS = 300;

    private static ComposeSuite suite;

    @BeforeAll
    @Timeout(value = 12, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void up(ComposeSuite compose) {
        suite = compose;
    }

    @Test
    void oneCheckoutThroughTheContainersIsOneTraceWithTheBudgetAtEveryHop() {
        OtlpReceiver receiver = suite.traces;
        ManagedChannel toEdge = suite.channel("edge", 50063);
        String sku = "traced-" + System.nanoTime();
        receiver.spans.clear(); // the other tests' traces: this one is then the only Checkout
        try {
            // Connected first: the deadline counts from the call's start, and a new connection through
            // Docker's proxy on a loaded machine takes longer than the call's way to Edge.
            await("the channel to Edge connected")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> toEdge.getState(true) == ConnectivityState.READY);
            assertThat(EdgeGrpc.newBlockingStub(toEdge)
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .checkout(CheckoutRequest.newBuilder().addSkus(sku).build())
                            .getLinesList())
                    .extracting(Line::getAvailable)
                    .containsOnly(true);
        } finally {
            toEdge.shutdownNow();
        }

        await("the Checkout's trace from all three containers")
                .atMost(Duration.ofSeconds(60))
                .until(() -> trace(receiver, sku).stream()
                                        .map(ReceivedSpan::service)
                                        .distinct()
                                        .count()
                                == 3
                        && trace(receiver, sku).size() >= 5);
        CheckoutHops hops = CheckoutHops.of(trace(receiver, sku));
        // 1.5 s in at Edge; at each hop, at most what the hop above had less its 0.2 s reserve.
        double edge = ms(hops.edgeServed(), "grpcops.budget.remaining_ms");
        double pricing = ms(hops.pricingServed(), "grpcops.budget.remaining_ms");
        double stock = ms(hops.stockServed(), "grpcops.budget.remaining_ms");
        assertThat(edge).isBetween(1500 - SPENT_BETWEEN_HOPS_MS, 1500.0);
        assertThat(pricing).isBetween(edge - 200 - SPENT_BETWEEN_HOPS_MS, edge - 200 + 1);
        assertThat(stock).isBetween(pricing - 200 - SPENT_BETWEEN_HOPS_MS, pricing - 200 + 1);
        assertThat(ms(hops.pricingAttempt(), "grpcops.deadline_ms"))
                .isBetween(stock - 1, stock + SPENT_BETWEEN_HOPS_MS);
    }

    /** The spans of the one Checkout made since the receiver was cleared (1.5 s deadline). */
    private static List<ReceivedSpan> trace(OtlpReceiver receiver, String sku) {
        return receiver.checkoutTrace(1600);
    }
}
