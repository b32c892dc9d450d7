package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.SkuStats;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=stock-test",
            "grpc.server.port=-1",
            "grpc.client.stock.address=in-process:stock-test",
            "management.server.port=-1",
            // Nothing here tests the drain; without this each context close would wait the default 5 s.
            "grpcops.shutdown.drain-delay=0s",
        })
class StockServiceTests {

    @GrpcClient("stock")
    private StockGrpc.StockBlockingStub stock;

    @Autowired
    private MeterRegistry registry;

    @Test
    void recordsTheDeadlineEachCallArrivedWith() {
        stock.withDeadlineAfter(1, TimeUnit.SECONDS).check(check("recorded", 0));
        stock.check(check("recorded", 0));

        SkuStats stats = stats("recorded");
        assertThat(stats.getCalls()).isEqualTo(2);
        // What is left of the 1 s on arrival: in-process that is nearly all of it, but a cold JVM's
        // first call may take a few hundred ms; half the deadline still tells it from "no deadline" (-1)
        // and from a default that is not the caller's.
        assertThat(stats.getReceivedDeadlineS(0)).isBetween(0.5, 1.0);
        assertThat(stats.getReceivedDeadlineS(1)).as("no deadline").isEqualTo(-1);
    }

    @Test
    void answersTheDocumentedQuantity() {
        // "ab": 97 + 98 = 195 -> 95
        assertThat(stock.check(check("ab", 0)).getQty()).isEqualTo(95);
        assertThat(stock.check(check("ab", 0)).getSku()).isEqualTo("ab");
    }

    @Test
    void flakySkuFailsOnlyItsFirstCall() {
        StatusRuntimeException first =
                catchThrowableOfType(StatusRuntimeException.class, () -> stock.check(check("flaky-first", 0)));
        assertThat(first.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(stock.check(check("flaky-first", 0)).getSku()).isEqualTo("flaky-first");
        assertThat(stats("flaky-first").getCalls()).isEqualTo(2);
    }

    @Test
    void waitsDelayMsBeforeAnswering() {
        long started = System.nanoTime();
        stock.check(check("delayed", 300));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }

    @Test
    void dropsTheReplyWhenTheCallerDeadlinePasses() {
        Duration delay = Duration.ofSeconds(10);
        StatusRuntimeException late = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.withDeadlineAfter(300, TimeUnit.MILLISECONDS)
                        .check(check("abandoned", (int) delay.toMillis())));
        assertThat(late.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        // The scheduled reply is gone, not waiting out its 10 s for a caller that left: zero well
        // before the delay is up can only be the cancelled reply, not a sent one.
        await().atMost(delay.dividedBy(2))
                .untilAsserted(() -> assertThat(
                                registry.get("stock.replies.pending").gauge().value())
                        .isZero());
    }

    @Test
    void statsOfAnUnknownSkuIsZeroCalls() {
        assertThat(stats("never-called").getCalls()).isZero();
        assertThat(stats("never-called").getReceivedDeadlineSCount()).isZero();
    }

    @Test
    void statsOfEverySkuWhenNoneIsNamed() {
        stock.check(check("listed", 0));
        assertThat(stock.stats(StatsRequest.getDefaultInstance()).getSkusList())
                .extracting(SkuStats::getSku)
                .contains("listed");
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNotRecorded() {
        StatusRuntimeException bad =
                catchThrowableOfType(StatusRuntimeException.class, () -> stock.check(check("bad-delay", -5)));
        assertThat(bad.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(bad.getStatus().getDescription()).isEqualTo("delay_ms: must be 0-60000, got -5");
        assertThat(stats("bad-delay").getCalls()).isZero();

        StatusRuntimeException badStats = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.stats(
                        StatsRequest.newBuilder().setSku("x".repeat(200)).build()));
        assertThat(badStats.getStatus().getDescription()).startsWith("sku:");
        // Still serving.
        assertThat(stock.check(check("after-bad", 0)).getSku()).isEqualTo("after-bad");
    }

    private SkuStats stats(String sku) {
        return stock.stats(StatsRequest.newBuilder().setSku(sku).build()).getSkus(0);
    }

    private static CheckRequest check(String sku, int delayMs) {
        return CheckRequest.newBuilder().setSku(sku).setDelayMs(delayMs).build();
    }
}
