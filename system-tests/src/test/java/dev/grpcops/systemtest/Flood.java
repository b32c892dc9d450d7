package dev.grpcops.systemtest;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Noisy callers: each keeps {@code inFlight} Checkouts of 3 SKUs open, with no deadline (or {@link
 * #deadline}), sending the next the moment one ends (a closed loop that ignores pushback), and
 * counts the statuses.
 */
final class Flood implements AutoCloseable {

    private static final CheckoutRequest CHECKOUT = CheckoutRequest.newBuilder()
            .addSkus("flood-a")
            .addSkus("flood-b")
            .addSkus("flood-c")
            .build();

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Map<Status.Code, AtomicInteger> statuses = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();
    /** Each Checkout's deadline, from when it is sent; null for none. */
    private final java.time.Duration deadline;

    Flood(List<ManagedChannel> channels, List<String> callers, String criticality, int inFlight) {
        this(channels, callers, criticality, inFlight, null);
    }

    /** As the flood above, each Checkout with {@code deadline} (null: none). */
    Flood(
            List<ManagedChannel> channels,
            List<String> callers,
            String criticality,
            int inFlight,
            java.time.Duration deadline) {
        this.deadline = deadline;
        for (int c = 0; c < callers.size(); c++) {
            Metadata headers = new Metadata();
            headers.put(Metadata.Key.of("x-grpcops-caller", Metadata.ASCII_STRING_MARSHALLER), callers.get(c));
            headers.put(Metadata.Key.of("x-grpcops-criticality", Metadata.ASCII_STRING_MARSHALLER), criticality);
            for (int i = 0; i < inFlight; i++) {
                // Spread over the connections: one carries at most 1000 calls at once.
                send(EdgeGrpc.newFutureStub(channels.get((c + i) % channels.size()))
                        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers)));
            }
        }
    }

    private void send(EdgeGrpc.EdgeFutureStub stub) {
        if (!running.get()) {
            return;
        }
        open.incrementAndGet();
        EdgeGrpc.EdgeFutureStub sent =
                deadline == null ? stub : stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
        Futures.addCallback(
                sent.checkout(CHECKOUT),
                new FutureCallback<CheckoutReply>() {
                    @Override
                    public void onSuccess(CheckoutReply reply) {
                        done(Status.Code.OK);
                    }

                    @Override
                    public void onFailure(Throwable failure) {
                        done(Status.fromThrowable(failure).getCode());
                    }

                    private void done(Status.Code code) {
                        open.decrementAndGet();
                        statuses.computeIfAbsent(code, k -> new AtomicInteger()).incrementAndGet();
                        send(stub);
                    }
                },
                MoreExecutors.directExecutor());
    }

    int count(Status.Code code) {
        AtomicInteger count = statuses.get(code);
        return count == null ? 0 : count.get();
    }

    Map<Status.Code, AtomicInteger> statuses() {
        return statuses;
    }

    int open() {
        return open.get();
    }

    @Override
    public void close() {
        running.set(false);
    }
}
