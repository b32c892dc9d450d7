package dev.grpcops.cli;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Starts one asynchronous call of the load: the same request, headers and deadline each time, on
 * the channels in turn. No thread waits for an answer; the answer is recorded where it arrives.
 */
final class LoadCaller {

    private final List<Channel> channels;
    private final Methods.Method method;
    private final Message request;
    private final Duration deadline;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger outstanding = new AtomicInteger();
    private final LongAdder ended = new LongAdder();
    /** Every call runs in this context, so that calls left over at the end can be cancelled at once. */
    private final Context.CancellableContext context = Context.ROOT.withCancellation();

    LoadCaller(
            List<ManagedChannel> channels,
            Methods.Method method,
            Message request,
            Metadata headers,
            Duration deadline) {
        this.channels = channels.stream()
                .map(channel ->
                        ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers)))
                .toList();
        this.method = method;
        this.request = request;
        this.deadline = deadline;
    }

    /** Calls ended so far, over every phase. */
    long ended() {
        return ended.sum();
    }

    /** Calls started and not yet ended, over every phase. */
    int outstanding() {
        return outstanding.get();
    }

    /**
     * Starts a call whose latency counts from {@code sendNanos} (its intended send time), records
     * its end in {@code stats}, then runs {@code then} (may be null) on a gRPC executor thread.
     */
    void call(long sendNanos, LoadStats stats, Runnable then) {
        stats.sent();
        outstanding.incrementAndGet();
        Channel channel = channels.get(Math.floorMod(next.getAndIncrement(), channels.size()));
        CallOptions options = deadline == null
                ? CallOptions.DEFAULT
                : CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
        Context previous = context.attach();
        try {
            ClientCalls.asyncUnaryCall(channel.newCall(method.descriptor(), options), request, new StreamObserver<>() {
                @Override
                public void onNext(Message reply) {}

                @Override
                public void onError(Throwable failure) {
                    ended(Status.fromThrowable(failure).getCode().name());
                }

                @Override
                public void onCompleted() {
                    ended(Status.Code.OK.name());
                }

                private void ended(String status) {
                    long now = System.nanoTime();
                    outstanding.decrementAndGet();
                    ended.increment();
                    stats.ended(status, now - sendNanos, now);
                    if (then != null) {
                        then.run();
                    }
                }
            });
        } finally {
            context.detach(previous);
        }
    }

    /** Cancels every call still outstanding: each ends CANCELLED. */
    void cancelAll() {
        context.cancel(null);
    }
}
