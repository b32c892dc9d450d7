package dev.grpcops.warmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Real in-process servers; the assertions are what the server saw. */
@Timeout(30)
class WarmUpTests {

    private static final WhoRequest WHO = WhoRequest.getDefaultInstance();
    private static final DrainRequest DRAIN = DrainRequest.getDefaultInstance();

    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final List<String> warmUpHeaders = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostInFlight = new AtomicInteger();
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void sendsEveryCallOnceInTheOrderAddedWithTheWarmUpHeader() throws Exception {
        start(new Answering(Duration.ZERO), false);
        WarmUp warmUp = WarmUp.builder()
                .call(WhoAmIGrpc.getWhoMethod(), WHO, 300)
                .call(WhoAmIGrpc.getResumeMethod(), DRAIN, 50)
                .build();

        WarmUpResult result = warmUp.run(channel).get(20, TimeUnit.SECONDS);

        assertThat(served.get("Who")).hasValue(300);
        assertThat(served.get("Resume")).hasValue(50);
        assertThat(result.calls()).isEqualTo(350);
        assertThat(result.ok()).isEqualTo(350);
        assertThat(result.cutShort()).isFalse();
        assertThat(warmUpHeaders).as("this process's token").hasSize(350).containsOnly(WarmUpMark.token());
        assertThat(warmUp.size()).isEqualTo(350);
    }

    @Test
    void neverHasMoreCallsOutstandingThanItsConcurrency() throws Exception {
        start(new Answering(Duration.ofMillis(2)), false);

        WarmUp.builder()
                .call(WhoAmIGrpc.getWhoMethod(), WHO, 200)
                .concurrency(3)
                .build()
                .run(channel)
                .get(20, TimeUnit.SECONDS);

        assertThat(served.get("Who")).hasValue(200);
        assertThat(mostInFlight.get()).isBetween(1, 3);
    }

    @Test
    void failedCallsAreCountedByStatusAndTheRunGoesOn() throws Exception {
        start(new Answering(Duration.ZERO), false);

        WarmUpResult result = WarmUp.builder()
                .call(WhoAmIGrpc.getDrainMethod(), DRAIN, 20) // this server answers Drain with PERMISSION_DENIED
                .call(WhoAmIGrpc.getWhoMethod(), WHO, 10)
                .build()
                .run(channel)
                .get(20, TimeUnit.SECONDS);

        assertThat(result.statuses()).isEqualTo(Map.of(Status.Code.PERMISSION_DENIED, 20L, Status.Code.OK, 10L));
        assertThat(result.cutShort()).isFalse();
    }

    @Test
    void stopsSendingAtItsTimeLimitAndEndsWhenTheCallsInFlightDo() throws Exception {
        start(new Answering(Duration.ofSeconds(60)), false); // never answers in time

        long start = System.nanoTime();
        WarmUpResult result = WarmUp.builder()
                .call(WhoAmIGrpc.getWhoMethod(), WHO, 1_000_000)
                .concurrency(2)
                .deadline(Duration.ofMillis(100))
                .timeLimit(Duration.ofMillis(300))
                .build()
                .run(channel)
                .get(20, TimeUnit.SECONDS);

        assertThat(result.cutShort()).isTrue();
        assertThat(result.statuses()).containsOnlyKeys(Status.Code.DEADLINE_EXCEEDED);
        assertThat(result.calls()).isLessThan(100);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void aDirectExecutorChannelThatFailsAtOnceDoesNotRecurse() throws Exception {
        start(new Answering(Duration.ZERO), true);

        WarmUpResult result = WarmUp.builder()
                .call(HealthGrpc.getCheckMethod(), io.grpc.health.v1.HealthCheckRequest.getDefaultInstance(), 100_000)
                .concurrency(8)
                .build()
                .run(channel)
                .get(20, TimeUnit.SECONDS);

        assertThat(result.statuses()).isEqualTo(Map.of(Status.Code.UNIMPLEMENTED, 100_000L));
    }

    @Test
    void aChannelThatCannotCallFailsEveryCallAndTheRunEnds() throws Exception {
        start(new Answering(Duration.ZERO), false);
        channel.shutdownNow();

        WarmUpResult result = WarmUp.builder()
                .call(WhoAmIGrpc.getWhoMethod(), WHO, 1000)
                .build()
                .run(channel)
                .get(20, TimeUnit.SECONDS);

        assertThat(result.statuses()).isEqualTo(Map.of(Status.Code.UNAVAILABLE, 1000L));
        assertThat(served).isEmpty();
    }

    @Test
    void nothingToSendCompletesAtOnce() throws Exception {
        start(new Answering(Duration.ZERO), false);

        WarmUpResult result = WarmUp.builder().build().run(channel).get(5, TimeUnit.SECONDS);

        assertThat(result.calls()).isZero();
        assertThat(result.cutShort()).isFalse();
    }

    @Test
    void rejectsWhatCannotBeAWarmUp() {
        MethodDescriptor<WhoRequest, WhoReply> streaming = WhoAmIGrpc.getWhoMethod().toBuilder()
                .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
                .build();
        assertThatThrownBy(() -> WarmUp.builder().call(streaming, WHO, 1))
                .hasMessageContaining("grpcops.v1.WhoAmI/Who is not unary");
        assertThatThrownBy(() -> WarmUp.builder().call(WhoAmIGrpc.getWhoMethod(), WHO, -1))
                .hasMessageContaining("count must not be negative");
        assertThatThrownBy(() -> WarmUp.builder().concurrency(0))
                .hasMessageContaining("concurrency must be at least 1");
        assertThatThrownBy(() -> WarmUp.builder().deadline(Duration.ZERO))
                .hasMessageContaining("deadline must be positive");
        assertThatThrownBy(() -> WarmUp.builder().timeLimit(Duration.ofSeconds(-1)))
                .hasMessageContaining("timeLimit must be positive");
    }

    private void start(Answering service, boolean direct) throws Exception {
        String name = InProcessServerBuilder.generateName();
        InProcessServerBuilder builder =
                InProcessServerBuilder.forName(name).addService(ServerInterceptors.intercept(service, new Observing()));
        InProcessChannelBuilder channelBuilder = InProcessChannelBuilder.forName(name);
        if (direct) {
            builder.directExecutor();
            channelBuilder.directExecutor();
        }
        server = builder.build().start();
        channel = channelBuilder.build();
    }

    /** Counts calls per method, their warm-up header, and how many are in flight at once. */
    private final class Observing implements ServerInterceptor {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
            served.computeIfAbsent(call.getMethodDescriptor().getBareMethodName(), m -> new AtomicInteger())
                    .incrementAndGet();
            warmUpHeaders.add(String.valueOf(headers.get(WarmUp.HEADER)));
            mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            return next.startCall(
                    new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                        @Override
                        public void close(Status status, Metadata trailers) {
                            inFlight.decrementAndGet();
                            super.close(status, trailers);
                        }
                    },
                    headers);
        }
    }

    /** Answers Who and Resume after {@code delay} (scheduled, never blocking), refuses Drain. */
    private static final class Answering extends WhoAmIGrpc.WhoAmIImplBase {
        private static final java.util.concurrent.ScheduledExecutorService TIMER =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "answering");
                    t.setDaemon(true);
                    return t;
                });
        private final Duration delay;

        Answering(Duration delay) {
            this.delay = delay;
        }

        @Override
        public void who(WhoRequest request, StreamObserver<WhoReply> response) {
            answer(response, WhoReply.newBuilder().setPod("warm").build());
        }

        @Override
        public void resume(DrainRequest request, StreamObserver<DrainReply> response) {
            answer(response, DrainReply.getDefaultInstance());
        }

        @Override
        public void drain(DrainRequest request, StreamObserver<DrainReply> response) {
            response.onError(Status.PERMISSION_DENIED.asRuntimeException());
        }

        private <T> void answer(StreamObserver<T> response, T reply) {
            Runnable send = () -> {
                try {
                    response.onNext(reply);
                    response.onCompleted();
                } catch (RuntimeException cancelled) {
                    // the caller's deadline passed first
                }
            };
            if (delay.isZero()) {
                send.run();
            } else {
                TIMER.schedule(send, delay.toNanos(), TimeUnit.NANOSECONDS);
            }
        }
    }
}
