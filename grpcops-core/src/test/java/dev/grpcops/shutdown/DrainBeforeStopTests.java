package dev.grpcops.shutdown;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Two real (in-process) servers, as a service with a separate management server has. */
@Timeout(30)
class DrainBeforeStopTests {

    private static final WhoRequest WHO = WhoRequest.getDefaultInstance();
    /** Long enough that no test passes by waiting it out. */
    private static final Duration FOREVER = Duration.ofMinutes(10);

    private final HealthStatusManager health = new HealthStatusManager();
    private final InFlightCalls inFlight = new InFlightCalls(Set.of(HealthGrpc.SERVICE_NAME));
    private final HeldCalls podA = new HeldCalls("a");
    private final HeldCalls podB = new HeldCalls("b");
    private Server a;
    private Server b;
    private ManagedChannel toA;
    private ManagedChannel toB;

    @BeforeEach
    void start() throws Exception {
        String name = InProcessServerBuilder.generateName();
        a = server(name + "-a", podA);
        b = server(name + "-b", podB);
        toA = InProcessChannelBuilder.forName(name + "-a").build();
        toB = InProcessChannelBuilder.forName(name + "-b").build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (ManagedChannel channel : List.of(toA, toB)) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Server server : List.of(a, b)) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void theDrainingHookRunsOnceHealthSaysNotServingAndBeforeTheServersStop() {
        List<String> seen = new java.util.ArrayList<>();
        DrainBeforeStop.builder(health, inFlight)
                .drainDelay(Duration.ZERO)
                .grace(Duration.ofSeconds(10))
                .whenDraining(() -> seen.add(io.grpc.health.v1.HealthGrpc.newBlockingStub(toA)
                                .withDeadlineAfter(5, TimeUnit.SECONDS)
                                .check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance())
                                .getStatus()
                        + ", serving calls: "
                        + !a.isShutdown()))
                .build()
                .drain(List.of(a, b));

        assertThat(seen).containsExactly("NOT_SERVING, serving calls: true");
        assertThat(a.isShutdown()).isTrue();
    }

    @Test
    void drainsEveryServerNotOnlyTheLastStarted() {
        DrainBeforeStop.builder(health, inFlight)
                .drainDelay(Duration.ZERO)
                .grace(Duration.ofSeconds(10))
                .build()
                .drain(List.of(a, b));

        assertThat(a.isTerminated()).as("first server terminated").isTrue();
        assertThat(b.isTerminated()).as("second server terminated").isTrue();
    }

    @Test
    void callsInFlightOnEveryServerFinishBeforeTheServersStop() throws Exception {
        ListenableFuture<WhoReply> onA = call(toA);
        ListenableFuture<WhoReply> onB = call(toB);
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(2));
        Drain drain = Drain.start(
                DrainBeforeStop.builder(health, inFlight)
                        .drainDelay(Duration.ZERO)
                        .grace(FOREVER)
                        .build(),
                List.of(a, b));

        await().untilAsserted(() -> assertThat(a.isShutdown() && b.isShutdown())
                .as("both servers take no new calls")
                .isTrue());
        assertThat(drain.thread.isAlive()).as("waiting for the calls in flight").isTrue();
        StatusRuntimeException refused = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> WhoAmIGrpc.newBlockingStub(toA)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .who(WHO));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);

        podA.answerOne();
        podB.answerOne();

        assertThat(onA.get(10, TimeUnit.SECONDS).getPod()).isEqualTo("a");
        assertThat(onB.get(10, TimeUnit.SECONDS).getPod()).isEqualTo("b");
        drain.finish();
        assertThat(drain.thrown).isNull();
        assertThat(drain.interruptedAfter).isFalse();
        assertThat(a.isTerminated() && b.isTerminated())
                .as("both servers terminated")
                .isTrue();
    }

    @Test
    void interruptDuringTheDrainDelayStillStopsTheServersAndKeepsTheInterrupt() throws Exception {
        ListenableFuture<WhoReply> held = call(toA);
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));
        Drain drain = Drain.start(
                DrainBeforeStop.builder(health, inFlight)
                        .drainDelay(FOREVER)
                        .grace(FOREVER)
                        .build(),
                List.of(a, b));

        await().untilAsserted(() -> assertThat(healthOf(toB)).isEqualTo(ServingStatus.NOT_SERVING));
        assertThat(a.isShutdown() || b.isShutdown())
                .as("still serving during the drain delay")
                .isFalse();

        drain.thread.interrupt();

        drain.finish();
        assertThat(drain.thrown).isNull();
        assertThat(drain.interruptedAfter).as("interrupt flag restored").isTrue();
        assertThat(a.isTerminated()).as("first server terminated").isTrue();
        assertThat(b.isTerminated()).as("second server terminated").isTrue();
        assertCancelled(held);
    }

    @Test
    void interruptWhileWaitingForCallsInFlightStillStopsTheServersAndKeepsTheInterrupt() throws Exception {
        ListenableFuture<WhoReply> held = call(toA);
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));
        Drain drain = Drain.start(
                DrainBeforeStop.builder(health, inFlight)
                        .drainDelay(Duration.ZERO)
                        .grace(FOREVER)
                        .build(),
                List.of(a, b));

        await().untilAsserted(() -> assertThat(a.isShutdown() || b.isShutdown())
                .as("GOAWAY phase begun")
                .isTrue());
        drain.thread.interrupt();

        drain.finish();
        assertThat(drain.thrown).isNull();
        assertThat(drain.interruptedAfter).as("interrupt flag restored").isTrue();
        assertThat(a.isTerminated()).as("first server terminated").isTrue();
        assertThat(b.isTerminated()).as("second server terminated").isTrue();
        assertCancelled(held);
    }

    @Test
    void callsStillInFlightWhenTheGraceRunsOutAreCancelled() throws Exception {
        Duration grace = Duration.ofMillis(300);
        ListenableFuture<WhoReply> held = call(toB);
        await().untilAsserted(() -> assertThat(inFlight.count()).isEqualTo(1));

        // The grace running out is the behaviour under test: the drain waits it out.
        long start = System.nanoTime();
        DrainBeforeStop.builder(health, inFlight)
                .drainDelay(Duration.ZERO)
                .grace(grace)
                .build()
                .drain(List.of(a, b));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(took).isGreaterThanOrEqualTo(grace).isLessThan(grace.plusSeconds(10));
        assertThat(a.isTerminated() && b.isTerminated()).isTrue();
        assertCancelled(held);
    }

    private Server server(String name, HeldCalls pod) throws Exception {
        return InProcessServerBuilder.forName(name)
                .addService(ServerInterceptors.intercept(pod, inFlight))
                .addService(ServerInterceptors.intercept(health.getHealthService(), inFlight))
                .build()
                .start();
    }

    private static ListenableFuture<WhoReply> call(ManagedChannel channel) {
        return WhoAmIGrpc.newFutureStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .who(WHO);
    }

    private static ServingStatus healthOf(ManagedChannel channel) {
        return HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(HealthCheckRequest.getDefaultInstance())
                .getStatus();
    }

    private static void assertCancelled(ListenableFuture<WhoReply> call) {
        ExecutionException failed =
                catchThrowableOfType(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        assertThat(failed).as("the call held failed").isNotNull();
        assertThat(Status.fromThrowable(failed.getCause()).getCode())
                .isIn(Status.Code.UNAVAILABLE, Status.Code.CANCELLED);
    }

    /** A drain on a thread of its own, and how it ended. */
    private static final class Drain {

        final Thread thread;
        volatile Throwable thrown;
        volatile boolean interruptedAfter;

        private Drain(DrainBeforeStop drain, List<Server> servers) {
            thread = new Thread(
                    () -> {
                        try {
                            drain.drain(servers);
                        } catch (Throwable e) {
                            thrown = e;
                        }
                        interruptedAfter = Thread.currentThread().isInterrupted();
                    },
                    "test-drain");
            thread.setDaemon(true);
        }

        static Drain start(DrainBeforeStop drain, List<Server> servers) {
            Drain started = new Drain(drain, servers);
            started.thread.start();
            return started;
        }

        void finish() throws InterruptedException {
            thread.join(TimeUnit.SECONDS.toMillis(15));
            assertThat(thread.isAlive()).as("drain() returned").isFalse();
        }
    }
}
