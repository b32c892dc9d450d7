package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/** stock.max-pending-replies over real gRPC (in-process), with a limit of 3. */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=stock-pending-test",
            "grpc.server.port=-1",
            "grpc.client.stock.address=in-process:stock-pending-test",
            "management.server.port=-1",
            "grpcops.shutdown.drain-delay=0s",
            "stock.max-pending-replies=3",
        })
@Timeout(60)
class PendingRepliesTests {

    private static final int LIMIT = 3;
    /** Far longer than any test: a reply this late is only ever cancelled. */
    private static final int HELD_MS = 60_000;

    @GrpcClient("stock")
    private StockGrpc.StockBlockingStub stock;

    @GrpcClient("stock")
    private StockGrpc.StockStub async;

    @Autowired
    private MeterRegistry registry;

    private final List<Held> held = new ArrayList<>();

    @AfterEach
    void cancelHeldCalls() {
        held.forEach(Held::cancel);
        await().atMost(Duration.ofSeconds(10)).until(() -> pending() == 0);
    }

    @Test
    void beyondTheLimitADelayedCheckIsResourceExhaustedNamingTheProperty() {
        fill();

        StatusRuntimeException refused = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.withDeadlineAfter(10, TimeUnit.SECONDS).check(check("one-too-many", 10)));

        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(refused.getStatus().getDescription())
                .contains("stock.max-pending-replies")
                .contains(String.valueOf(LIMIT));
        assertThat(calls("one-too-many")).as("refused, so not recorded").isZero();
        // A Check without delay holds nothing and is still answered.
        assertThat(stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(check("immediate", 0))
                        .getSku())
                .isEqualTo("immediate");
        assertThat(pending()).isEqualTo(LIMIT);
    }

    @Test
    void aCancelledCallFreesItsPlace() {
        fill();
        held.get(0).cancel();
        await().atMost(Duration.ofSeconds(10)).until(() -> pending() == LIMIT - 1);

        assertThat(stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(check("after-cancel", 10))
                        .getSku())
                .isEqualTo("after-cancel");
    }

    @Test
    void aSentReplyFreesItsPlace() {
        for (int i = 0; i < 2 * LIMIT; i++) {
            assertThat(stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                            .check(check("sent-" + i, 1))
                            .getSku())
                    .isEqualTo("sent-" + i);
        }
        assertThat(pending()).isZero();
    }

    @Test
    void aFlakySkuRefusedForRoomStillFailsItsFirstServedCall() {
        fill();
        StatusRuntimeException refused = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.withDeadlineAfter(10, TimeUnit.SECONDS).check(check("flaky-full", 10)));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        held.forEach(Held::cancel);
        await().atMost(Duration.ofSeconds(10)).until(() -> pending() == 0);

        StatusRuntimeException first = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.withDeadlineAfter(10, TimeUnit.SECONDS).check(check("flaky-full", 10)));
        assertThat(first.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(pending()).as("the failed call gave its place back").isZero();
        assertThat(stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(check("flaky-full", 10))
                        .getSku())
                .isEqualTo("flaky-full");
    }

    /** Holds LIMIT delayed calls, and waits until Stock counts them all. */
    private void fill() {
        for (int i = 0; i < LIMIT; i++) {
            held.add(new Held("held-" + i));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> pending() == LIMIT);
    }

    private double pending() {
        return registry.get("stock.replies.pending").gauge().value();
    }

    private long calls(String sku) {
        return stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                .stats(StatsRequest.newBuilder().setSku(sku).build())
                .getSkus(0)
                .getCalls();
    }

    private static CheckRequest check(String sku, int delayMs) {
        return CheckRequest.newBuilder().setSku(sku).setDelayMs(delayMs).build();
    }

    /** A Check waiting out HELD_MS on Stock, until cancelled. */
    private final class Held {

        private final Context.CancellableContext context = Context.current().withCancellation();

        Held(String sku) {
            context.run(() -> async.withDeadlineAfter(HELD_MS, TimeUnit.MILLISECONDS)
                    .check(check(sku, HELD_MS), new StreamObserver<>() {
                        @Override
                        public void onNext(CheckReply value) {}

                        @Override
                        public void onError(Throwable t) {
                            // Cancelled by the test: expected.
                        }

                        @Override
                        public void onCompleted() {}
                    }));
        }

        void cancel() {
            context.cancel(null);
        }
    }
}
