package dev.grpcops.warmup;

import dev.grpcops.internal.SharedScheduler;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.warmup.internal.WarmUpServerInterceptor;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fixed set of unary calls sent to a channel, a few at a time, to warm a server up before it
 * takes traffic: the JIT compiles the paths those calls take, classes load, pools and downstream
 * connections open. Non-blocking: {@link #run} returns at once and completes when the last call
 * does, or when the time limit passes and the calls in flight end.
 *
 * <pre>{@code
 * WarmUp warmUp = WarmUp.builder()
 *         .call(StockGrpc.getCheckMethod(), CheckRequest.newBuilder().setSku("warm-up").build(), 2000)
 *         .concurrency(4).deadline(Duration.ofSeconds(1)).timeLimit(Duration.ofSeconds(30))
 *         .build();
 * warmUp.run(channel).thenRun(() -> health.setStatus("chain.v1.Stock", SERVING));
 * }</pre>
 *
 * Each call carries this process's warm-up token in {@link #HEADER}: a server of this process with
 * {@link #serverInterceptor()} (the outermost) serves it as a warm-up call, whose downstream calls
 * get one attempt each, neither retried nor hedged nor counted by the retry limiter, the balancers'
 * statistics or tracing, so that a downstream not up yet does not spend the tokens its callers'
 * retries need once it is. A caller outside the process cannot send the token: its header is dropped.
 */
public final class WarmUp {

    /** Present on every warm-up call, with this process's token. */
    public static final Metadata.Key<String> HEADER = WarmUpMark.HEADER;

    private final List<Calls<?>> calls;
    private final int concurrency;
    private final Duration deadline;
    private final Duration timeLimit;

    private WarmUp(Builder builder) {
        this.calls = List.copyOf(builder.calls);
        this.concurrency = builder.concurrency;
        this.deadline = builder.deadline;
        this.timeLimit = builder.timeLimit;
    }

    /** No calls yet; 4 at once, a 1 s deadline each, for at most 30 s. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder with this warm-up's calls and settings, to change some. */
    public Builder toBuilder() {
        Builder builder = builder().concurrency(concurrency).deadline(deadline).timeLimit(timeLimit);
        builder.calls.addAll(calls);
        return builder;
    }

    /** Calls outstanding at once. */
    public int concurrency() {
        return concurrency;
    }

    /** Each call's deadline. */
    public Duration deadline() {
        return deadline;
    }

    /** No call is sent after this long from the start. */
    public Duration timeLimit() {
        return timeLimit;
    }

    /**
     * Marks this process's warm-up calls as such where it serves them, and drops the header on any
     * other call: to be the server's outermost interceptor.
     */
    public static ServerInterceptor serverInterceptor() {
        return new WarmUpServerInterceptor();
    }

    /**
     * Whether the call being served on this thread is one of this process's warm-up calls (seen by
     * {@link #serverInterceptor()}): for handlers that leave warm-up traffic out of what they record.
     */
    public static boolean isWarmUpCall() {
        return WarmUpMark.active();
    }

    /** The number of calls a run sends when it is not stopped by its time limit. */
    public long size() {
        return calls.stream().mapToLong(Calls::count).sum();
    }

    /** Sends the calls on {@code channel}; the future completes when they are done, never exceptionally. */
    public CompletableFuture<WarmUpResult> run(Channel channel) {
        return new Run(channel).start();
    }

    /** One method, one request, sent {@code count} times. */
    private record Calls<ReqT>(MethodDescriptor<ReqT, ?> method, ReqT request, int count) {

        <RespT> void send(Channel channel, CallOptions options, ClientCall.Listener<RespT> listener) {
            @SuppressWarnings("unchecked")
            ClientCall<ReqT, RespT> call = channel.newCall((MethodDescriptor<ReqT, RespT>) method, options);
            Metadata headers = new Metadata();
            headers.put(HEADER, WarmUpMark.token());
            call.start(listener, headers);
            call.request(1);
            call.sendMessage(request);
            call.halfClose();
        }
    }

    /** One run: {@code concurrency} chains of calls, each call starting the next as it completes. */
    private final class Run {

        private final Channel channel;
        private final CompletableFuture<WarmUpResult> done = new CompletableFuture<>();
        private final AtomicLong next = new AtomicLong();
        private final AtomicInteger chains = new AtomicInteger();
        private final AtomicLong owed = new AtomicLong();
        private final Map<Status.Code, AtomicLong> statuses = new EnumMap<>(Status.Code.class);
        private final long total = size();
        private volatile boolean stopped;
        private volatile long startNanos;
        private ScheduledFuture<?> limit;

        Run(Channel channel) {
            this.channel = channel;
            for (Status.Code code : Status.Code.values()) {
                statuses.put(code, new AtomicLong());
            }
        }

        CompletableFuture<WarmUpResult> start() {
            startNanos = System.nanoTime();
            int n = (int) Math.min(concurrency, total);
            if (n == 0) {
                finish();
                return done;
            }
            limit = SharedScheduler.get().schedule(() -> stopped = true, timeLimit.toNanos(), TimeUnit.NANOSECONDS);
            chains.set(n);
            owe(n);
            return done;
        }

        /**
         * Sends {@code k} more calls. One thread at a time sends; a call that completes while it does
         * (a channel with a direct executor) adds to its work instead of recursing.
         */
        private void owe(long k) {
            if (owed.getAndAdd(k) != 0) {
                return;
            }
            for (long todo = k; todo > 0; todo = owed.addAndGet(-todo)) {
                for (long i = 0; i < todo; i++) {
                    sendOne();
                }
            }
        }

        /** Sends the next call of this chain, or ends the chain when there is none (or time is up). */
        private void sendOne() {
            long index = stopped ? total : next.getAndIncrement();
            if (index >= total) {
                if (chains.decrementAndGet() == 0) {
                    finish();
                }
                return;
            }
            Calls<?> batch = batchOf(index);
            CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
            try {
                batch.send(channel, options, new ClientCall.Listener<Object>() {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        statuses.get(status.getCode()).incrementAndGet();
                        owe(1);
                    }
                });
            } catch (RuntimeException e) {
                // The channel refuses calls (shut down): count it, send nothing more.
                statuses.get(Status.fromThrowable(e).getCode()).incrementAndGet();
                stopped = true;
                owe(1);
            }
        }

        private Calls<?> batchOf(long index) {
            long end = 0;
            for (Calls<?> batch : calls) {
                end += batch.count();
                if (index < end) {
                    return batch;
                }
            }
            throw new IllegalStateException("call " + index + " of " + total);
        }

        private void finish() {
            if (limit != null) {
                limit.cancel(false);
            }
            Map<Status.Code, Long> counts = new EnumMap<>(Status.Code.class);
            statuses.forEach((code, count) -> {
                if (count.get() > 0) {
                    counts.put(code, count.get());
                }
            });
            long sent = counts.values().stream().mapToLong(Long::longValue).sum();
            done.complete(new WarmUpResult(counts, Duration.ofNanos(System.nanoTime() - startNanos), sent < total));
        }
    }

    /** Each setting has its default, said by its setter. */
    public static final class Builder {

        private final List<Calls<?>> calls = new ArrayList<>();
        private int concurrency = 4;
        private Duration deadline = Duration.ofSeconds(1);
        private Duration timeLimit = Duration.ofSeconds(30);

        private Builder() {}

        /** Sends {@code request} to {@code method} {@code count} times; calls are sent in the order added. */
        public <ReqT> Builder call(MethodDescriptor<ReqT, ?> method, ReqT request, int count) {
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(request, "request");
            if (method.getType() != MethodDescriptor.MethodType.UNARY) {
                throw new IllegalArgumentException(
                        method.getFullMethodName() + " is not unary: warm-up sends unary calls only");
            }
            if (count < 0) {
                throw new IllegalArgumentException("count must not be negative, got " + count);
            }
            calls.add(new Calls<>(method, request, count));
            return this;
        }

        /** Calls outstanding at once (default 4): enough to exercise the server's concurrency, not to flood it. */
        public Builder concurrency(int concurrency) {
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1, got " + concurrency);
            }
            this.concurrency = concurrency;
            return this;
        }

        /** Each call's deadline (default 1 s). */
        public Builder deadline(Duration deadline) {
            this.deadline = positive(deadline, "deadline");
            return this;
        }

        /** No call is sent after this long from the start (default 30 s); those in flight end by their deadline. */
        public Builder timeLimit(Duration timeLimit) {
            this.timeLimit = positive(timeLimit, "timeLimit");
            return this;
        }

        public WarmUp build() {
            return new WarmUp(this);
        }

        private static Duration positive(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isZero() || value.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, got " + value);
            }
            return value;
        }
    }
}
