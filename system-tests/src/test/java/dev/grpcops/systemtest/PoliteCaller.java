package dev.grpcops.systemtest;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A well-behaved caller: Checkouts of 3 SKUs at a fixed rate (open loop: latency counts from the
 * intended send time), each with its own deadline. A call counts as complete when it succeeded
 * with every line available.
 */
final class PoliteCaller {

    record Result(
            int sent,
            int complete,
            Map<String, Integer> others,
            long p50Millis,
            long p99Millis,
            long maxMillis,
            List<Long> sortedNanos) {

        double completeShare() {
            return sent == 0 ? 0 : (double) complete / sent;
        }

        /** The calls of {@code results} as one stretch: their counts added, their latencies together. */
        static Result together(Result... results) {
            List<Long> all = new ArrayList<>();
            Map<String, Integer> others = new java.util.TreeMap<>();
            int sent = 0;
            int complete = 0;
            for (Result result : results) {
                all.addAll(result.sortedNanos);
                result.others.forEach((code, count) -> others.merge(code, count, Integer::sum));
                sent += result.sent;
                complete += result.complete;
            }
            Collections.sort(all);
            return of(sent, complete, others, all);
        }

        private static Result of(int sent, int complete, Map<String, Integer> others, List<Long> sorted) {
            return new Result(
                    sent,
                    complete,
                    Map.copyOf(others),
                    millis(sorted, 0.50),
                    millis(sorted, 0.99),
                    sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1) / 1_000_000,
                    List.copyOf(sorted));
        }

        @Override
        public String toString() {
            return String.format(
                    java.util.Locale.ROOT,
                    "%d sent, %.1f %% complete, p50 %d ms, p99 %d ms, max %d ms, other outcomes %s",
                    sent,
                    100 * completeShare(),
                    p50Millis,
                    p99Millis,
                    maxMillis,
                    others);
        }
    }

    private PoliteCaller() {}

    static Result run(
            ManagedChannel channel,
            String caller,
            String criticality,
            int perSecond,
            Duration duration,
            Duration deadline)
            throws InterruptedException {
        return run(channel, caller, criticality, perSecond, duration, deadline, 3);
    }

    /** As {@link #run}, with {@code skus} SKUs per Checkout (each Checkout's own, besides the first). */
    static Result run(
            ManagedChannel channel,
            String caller,
            String criticality,
            int perSecond,
            Duration duration,
            Duration deadline,
            int skus)
            throws InterruptedException {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("x-grpcops-caller", Metadata.ASCII_STRING_MARSHALLER), caller);
        headers.put(Metadata.Key.of("x-grpcops-criticality", Metadata.ASCII_STRING_MARSHALLER), criticality);
        EdgeGrpc.EdgeFutureStub stub =
                EdgeGrpc.newFutureStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
        int total = (int) (perSecond * duration.toMillis() / 1000);
        long intervalNanos = TimeUnit.SECONDS.toNanos(1) / perSecond;
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        Map<String, Integer> others = new ConcurrentHashMap<>();
        AtomicInteger complete = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(total);
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
        long start = System.nanoTime();
        try {
            for (int i = 0; i < total; i++) {
                long intended = start + i * intervalNanos;
                int n = i;
                ticker.schedule(
                        () -> {
                            CheckoutRequest.Builder request =
                                    CheckoutRequest.newBuilder().addSkus(caller + "-" + n % 7);
                            for (int sku = 1; sku < skus; sku++) {
                                request.addSkus(caller + "-" + (char) ('a' + sku));
                            }
                            Futures.addCallback(
                                    stub.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                                            .checkout(request.build()),
                                    new FutureCallback<CheckoutReply>() {
                                        @Override
                                        public void onSuccess(CheckoutReply reply) {
                                            latencies.add(System.nanoTime() - intended);
                                            if (reply.getLinesList().stream().allMatch(Line::getAvailable)) {
                                                complete.incrementAndGet();
                                            } else {
                                                others.merge(
                                                        "lines "
                                                                + reply.getLinesList().stream()
                                                                        .filter(l -> !l.getAvailable())
                                                                        .map(Line::getReason)
                                                                        .toList(),
                                                        1,
                                                        Integer::sum);
                                            }
                                            done.countDown();
                                        }

                                        @Override
                                        public void onFailure(Throwable failure) {
                                            latencies.add(System.nanoTime() - intended);
                                            others.merge(
                                                    Status.fromThrowable(failure)
                                                            .getCode()
                                                            .name(),
                                                    1,
                                                    Integer::sum);
                                            done.countDown();
                                        }
                                    },
                                    MoreExecutors.directExecutor());
                        },
                        intended - System.nanoTime(),
                        TimeUnit.NANOSECONDS);
            }
            if (!done.await(duration.toMillis() + deadline.toMillis() + 30_000, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the polite caller's calls did not all end");
            }
        } finally {
            ticker.shutdownNow();
        }
        List<Long> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        return Result.of(total, complete.get(), others, sorted);
    }

    private static long millis(List<Long> sorted, double quantile) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int index = (int) Math.ceil(quantile * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index))) / 1_000_000;
    }
}
