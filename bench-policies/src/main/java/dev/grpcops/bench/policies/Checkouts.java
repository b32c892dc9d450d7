package dev.grpcops.bench.policies;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * An open loop of checkouts: at a fixed rate, whatever the answers do, a checkout sends one Check
 * per SKU at once, each with a 1 s deadline. Its latency is its slowest call's end, counted from the
 * time it was due to start, not from when it did: a checkout the sender started late (a GC, a busy
 * machine) is charged the wait, so nothing hides behind a stalled sender (coordinated omission).
 */
final class Checkouts {

    static final List<String> SKUS = List.of("a", "b", "c", "d", "e");
    static final long DEADLINE_MS = 1000;

    private Checkouts() {}

    /**
     * Checkouts started during {@code seconds}.
     *
     * @param latencyNanos every checkout's, complete or not (a failed call ends its checkout's wait too)
     * @param complete checkouts whose calls were all OK
     * @param unfinished checkouts still waiting long after every deadline: a bench bug, never expected
     * @param maxSendLagNanos how late the sender started a checkout at worst
     */
    record Result(long[] latencyNanos, int complete, int unfinished, long maxSendLagNanos) {

        int count() {
            return latencyNanos.length;
        }

        /** Nearest rank over the finished checkouts, in ms. */
        double percentileMs(double q) {
            long[] sorted =
                    Arrays.stream(latencyNanos).filter(l -> l >= 0).sorted().toArray();
            if (sorted.length == 0) {
                return Double.NaN;
            }
            int rank = (int) Math.ceil(q * sorted.length);
            return sorted[Math.max(0, rank - 1)] / 1e6;
        }

        double completePercent() {
            return count() == 0 ? Double.NaN : 100.0 * complete / count();
        }
    }

    static Result run(Channel channel, double perSecond, double seconds) throws InterruptedException {
        int count = (int) Math.round(perSecond * seconds);
        long[] latencies = new long[count];
        Arrays.fill(latencies, -1);
        AtomicInteger complete = new AtomicInteger();
        CountDownLatch finished = new CountDownLatch(count);
        StockGrpc.StockStub stock = StockGrpc.newStub(channel);
        long start = System.nanoTime();
        long maxLag = 0;
        for (int i = 0; i < count; i++) {
            long due = start + Math.round(i * 1e9 / perSecond);
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            maxLag = Math.max(maxLag, -wait);
            Checkout checkout = new Checkout(i, due, latencies, complete, finished);
            for (String sku : SKUS) {
                stock.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                        .check(CheckRequest.newBuilder().setSku(sku).build(), checkout.call());
            }
        }
        finished.await(DEADLINE_MS * 5, TimeUnit.MILLISECONDS);
        return new Result(latencies, complete.get(), (int) finished.getCount(), maxLag);
    }

    /** One checkout's calls: the last to end records the checkout. */
    private static final class Checkout {

        private final int index;
        private final long due;
        private final long[] latencies;
        private final AtomicInteger complete;
        private final CountDownLatch finished;
        private final AtomicInteger pending = new AtomicInteger(SKUS.size());
        private volatile boolean failed;

        Checkout(int index, long due, long[] latencies, AtomicInteger complete, CountDownLatch finished) {
            this.index = index;
            this.due = due;
            this.latencies = latencies;
            this.complete = complete;
            this.finished = finished;
        }

        StreamObserver<CheckReply> call() {
            return new StreamObserver<>() {
                @Override
                public void onNext(CheckReply reply) {}

                @Override
                public void onError(Throwable t) {
                    failed = true;
                    ended();
                }

                @Override
                public void onCompleted() {
                    ended();
                }
            };
        }

        private void ended() {
            if (pending.decrementAndGet() > 0) {
                return;
            }
            latencies[index] = System.nanoTime() - due;
            if (!failed) {
                complete.incrementAndGet();
            }
            // The latch publishes the latency to the thread that reads them all after await.
            finished.countDown();
        }
    }
}
