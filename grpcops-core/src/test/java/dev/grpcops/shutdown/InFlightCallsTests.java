package dev.grpcops.shutdown;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class InFlightCallsTests {

    private static final WhoRequest WHO = WhoRequest.getDefaultInstance();

    private final InFlightCalls inFlight = new InFlightCalls(Set.of(HealthGrpc.SERVICE_NAME));
    private final HeldCalls pod = new HeldCalls("p");
    private final ExecutorService waiter = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-await-none"));
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .addService(ServerInterceptors.intercept(pod, inFlight))
                .addService(ServerInterceptors.intercept(new HealthStatusManager().getHealthService(), inFlight))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        waiter.shutdownNow();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void awaitNoneWithNoCallInFlightReturnsTrueAtOnce() throws Exception {
        assertThat(inFlight.awaitNone(Duration.ZERO)).isTrue();
        assertThat(inFlight.awaitNone(Duration.ofMinutes(10))).isTrue();
    }

    @Test
    void awaitNoneReturnsTruePromptlyOnceTheLastCallEnds() throws Exception {
        Duration timeout = Duration.ofSeconds(20);
        ListenableFuture<WhoReply> first = call();
        ListenableFuture<WhoReply> second = call();
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(2));
        Future<Boolean> none = waiter.submit(() -> inFlight.awaitNone(timeout));

        pod.answerOne();
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));
        assertThat(none).as("one call is still in flight").isNotDone();

        long lastEnding = System.nanoTime();
        pod.answerOne();
        assertThat(none.get(timeout.toSeconds(), TimeUnit.SECONDS)).isTrue();
        Duration waited = Duration.ofNanos(System.nanoTime() - lastEnding);

        // Woken by the last call ending, not by its timeout running out (a quarter is a wide margin).
        assertThat(waited).isLessThan(timeout.dividedBy(4));
        assertThat(first.get(10, TimeUnit.SECONDS).getPod()).isEqualTo("p");
        assertThat(second.get(10, TimeUnit.SECONDS).getPod()).isEqualTo("p");
    }

    @Test
    void awaitNoneReturnsFalseAfterItsTimeoutWhileACallIsHeld() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        ListenableFuture<WhoReply> held = call();
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));

        // Waiting the timeout out is the behaviour under test.
        long start = System.nanoTime();
        boolean none = inFlight.awaitNone(timeout);
        Duration waited = Duration.ofNanos(System.nanoTime() - start);

        assertThat(none).isFalse();
        assertThat(waited).isGreaterThanOrEqualTo(timeout).isLessThan(timeout.plusSeconds(10));
        assertThat(inFlight.awaitNone(Duration.ZERO))
                .as("zero timeout: no wait at all")
                .isFalse();

        pod.answerOne();
        held.get(10, TimeUnit.SECONDS);
        assertThat(inFlight.awaitNone(Duration.ofSeconds(10))).isTrue();
    }

    @Test
    void negativeTimeoutWaitsUntilTheCallsHaveEnded() throws Exception {
        ListenableFuture<WhoReply> held = call();
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));
        Future<Boolean> none = waiter.submit(() -> inFlight.awaitNone(Duration.ofSeconds(-1)));
        assertThat(none).isNotDone();

        pod.answerOne();

        assertThat(none.get(10, TimeUnit.SECONDS)).isTrue();
        held.get(10, TimeUnit.SECONDS);
    }

    @Test
    void cancelledCallIsNoLongerInFlight() throws Exception {
        ListenableFuture<WhoReply> held = call();
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));

        held.cancel(true);

        assertThat(inFlight.awaitNone(Duration.ofSeconds(10))).isTrue();
        assertThat(inFlight.count()).isZero();
    }

    @Test
    void longLivedStreamsAreNotCounted() throws Exception {
        CountDownLatch firstStatus = new CountDownLatch(1);
        HealthGrpc.newStub(channel).watch(HealthCheckRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(HealthCheckResponse response) {
                firstStatus.countDown();
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
        });
        assertThat(firstStatus.await(10, TimeUnit.SECONDS))
                .as("the Watch stream is open")
                .isTrue();

        assertThat(inFlight.count()).isZero();
        assertThat(inFlight.awaitNone(Duration.ZERO)).isTrue();
    }

    private ListenableFuture<WhoReply> call() {
        return WhoAmIGrpc.newFutureStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .who(WHO);
    }

    /** A handler that fails to start with an Error must not leave a count that holds every drain for its grace. */
    @Test
    void aHandlerThatThrowsAnErrorWhenStartingLeavesNoCallInFlight() throws Exception {
        io.grpc.ServerCallHandler<Object, Object> failing = (call, headers) -> {
            throw new AssertionError("a handler that fails with an Error");
        };
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                () -> inFlight.interceptCall(new NoopCall(), new io.grpc.Metadata(), failing));

        assertThat(thrown).isInstanceOf(AssertionError.class);
        assertThat(inFlight.count()).isZero();
        assertThat(inFlight.awaitNone(Duration.ZERO)).isTrue();
    }

    /** A server call that only names its method. */
    private static final class NoopCall extends io.grpc.ServerCall<Object, Object> {
        @Override
        public void request(int numMessages) {}

        @Override
        public void sendHeaders(io.grpc.Metadata headers) {}

        @Override
        public void sendMessage(Object message) {}

        @Override
        public void close(io.grpc.Status status, io.grpc.Metadata trailers) {}

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        @SuppressWarnings("unchecked")
        public io.grpc.MethodDescriptor<Object, Object> getMethodDescriptor() {
            return (io.grpc.MethodDescriptor<Object, Object>)
                    (io.grpc.MethodDescriptor<?, ?>) WhoAmIGrpc.getWhoMethod();
        }
    }
}
