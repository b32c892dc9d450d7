package dev.grpcops.bench;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Stock: answers qty = sum of the SKU's UTF-8 bytes % 100, after {@code delay_ms} if asked. A
 * delayed reply is a task on one scheduler thread (no thread per call) and is dropped when the
 * caller goes away. Nothing else: no Stats recording, no flaky SKUs, no input checks.
 */
final class BenchStock extends StockGrpc.StockImplBase {

    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread thread = new Thread(runnable, "stock-delayed-replies");
        thread.setDaemon(true);
        return thread;
    });

    BenchStock() {
        scheduler.setRemoveOnCancelPolicy(true);
    }

    static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: stock PORT");
        }
        BenchStock stock = new BenchStock();
        Servers.serve("stock", Servers.port(args[0]), stock, stock.scheduler::shutdownNow);
    }

    @Override
    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
        CheckReply reply = CheckReply.newBuilder()
                .setSku(request.getSku())
                .setQty(quantity(request.getSku()))
                .build();
        if (request.getDelayMs() <= 0) {
            responses.onNext(reply);
            responses.onCompleted();
            return;
        }
        ServerCallStreamObserver<CheckReply> call = (ServerCallStreamObserver<CheckReply>) responses;
        Delayed delayed = new Delayed();
        // Deadline passed or caller gone: drop the reply now rather than at its time. The handler
        // can only be set while the call starts, so before the reply is scheduled.
        call.setOnCancelHandler(delayed::cancel);
        delayed.schedule(scheduler, request.getDelayMs(), () -> {
            call.onNext(reply);
            call.onCompleted();
        });
    }

    static int quantity(String sku) {
        int sum = 0;
        for (byte b : sku.getBytes(StandardCharsets.UTF_8)) {
            sum += b & 0xff;
        }
        return sum % 100;
    }

    /** One reply waiting out its delay; cancelling it (before or after it is scheduled) drops it. */
    private static final class Delayed {

        private volatile boolean cancelled;
        private volatile ScheduledFuture<?> future;

        void schedule(ScheduledThreadPoolExecutor scheduler, int delayMs, Runnable reply) {
            future = scheduler.schedule(
                    () -> {
                        if (!cancelled) {
                            reply.run();
                        }
                    },
                    delayMs,
                    TimeUnit.MILLISECONDS);
            if (cancelled) {
                future.cancel(false); // cancelled while being scheduled
            }
        }

        void cancel() {
            cancelled = true;
            ScheduledFuture<?> scheduled = future;
            if (scheduled != null) {
                scheduled.cancel(false);
            }
        }
    }
}
