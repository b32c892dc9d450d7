package dev.grpcops.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.proto.fault.v1.FaultSpec;
import dev.grpcops.proto.fault.v1.FaultState;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.proto.fault.v1.GetFaultsRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(30)
class FaultInjectionTests {

    private static final CheckRequest CHECK =
            CheckRequest.newBuilder().setSku("a").build();

    private final AtomicInteger handled = new AtomicInteger();
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private FaultInjection start(FaultInjection.Builder builder) throws Exception {
        FaultInjection faults = builder.replica("stock-1").build();
        StockGrpc.StockImplBase stock = new StockGrpc.StockImplBase() {
            @Override
            public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                handled.incrementAndGet();
                responses.onNext(CheckReply.newBuilder()
                        .setSku(request.getSku())
                        .setQty(3)
                        .build());
                responses.onCompleted();
            }
        };
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(stock, faults.interceptor()))
                .addService(ServerInterceptors.intercept(
                        new HealthStatusManager().getHealthService(), faults.interceptor()))
                .addService(ServerInterceptors.intercept(faults.adminService(), faults.interceptor()))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        return faults;
    }

    private StockGrpc.StockBlockingStub stock() {
        return StockGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /**
     * Two changes at once: the listener (the fault gauges) hears them in the order they were applied,
     * so that it never shows a fault that is not the one injected.
     */
    @Test
    void twoChangesAtOnceLeaveTheListenerShowingTheOneApplied() throws Exception {
        Faults slow = Faults.builder().delay(Duration.ofMillis(200)).build();
        Faults failing = Faults.builder().errorRatio(0.5).build();
        java.util.concurrent.CountDownLatch slowHeard = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch failingSet = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Faults> shown = new java.util.concurrent.atomic.AtomicReference<>();
        FaultInjection injection = FaultInjection.builder()
                .listener(new FaultListener() {
                    @Override
                    public void changed(Faults faults) {
                        if (faults.equals(slow)) {
                            slowHeard.countDown();
                            try {
                                // Without ordering, the other change would be applied and heard meanwhile.
                                failingSet.await(200, TimeUnit.MILLISECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        shown.set(faults);
                    }
                })
                .build();
        Thread first = new Thread(() -> injection.set(slow));
        first.start();
        assertThat(slowHeard.await(5, TimeUnit.SECONDS)).isTrue();
        Thread second = new Thread(() -> {
            injection.set(failing);
            failingSet.countDown();
        });
        second.start();
        first.join(5000);
        second.join(5000);
        assertThat(shown.get()).as("what the listener shows").isEqualTo(injection.current());
    }

    @Test
    void nothingIsInjectedUnlessAsked() throws Exception {
        FaultInjection faults = start(FaultInjection.builder());
        assertThat(faults.current()).isEqualTo(Faults.NONE);
        assertThat(stock().check(CHECK).getQty()).isEqualTo(3);
    }

    @Test
    void anErrorRatioFailsThatShareAtOnceWithUnavailableAndTheHandlerNeverRuns() throws Exception {
        double[] draws = {0.1, 0.7, 0.3, 0.9};
        AtomicInteger draw = new AtomicInteger();
        start(FaultInjection.builder()
                .faults(Faults.builder()
                        .delay(Duration.ZERO)
                        .stall(Duration.ZERO, Duration.ZERO)
                        .errorRatio(0.5)
                        .build())
                .random(() -> draws[draw.getAndIncrement() % draws.length]));
        int failed = 0;
        for (int i = 0; i < 4; i++) {
            try {
                stock().check(CHECK);
            } catch (StatusRuntimeException e) {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(e.getStatus().getDescription()).contains("fault injection");
                failed++;
            }
        }
        assertThat(failed).isEqualTo(2);
        assertThat(handled).hasValue(2);
    }

    @Test
    void aDelayHoldsEveryAnswerButNotHealth() throws Exception {
        start(FaultInjection.builder()
                .faults(Faults.builder()
                        .delay(Duration.ofMillis(300))
                        .stall(Duration.ZERO, Duration.ZERO)
                        .errorRatio(0)
                        .build()));
        long start = System.nanoTime();
        assertThat(stock().check(CHECK).getQty()).isEqualTo(3);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(handled).as("the handler ran at once; its answer waited").hasValue(1);

        long health = System.nanoTime();
        HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(250, TimeUnit.MILLISECONDS)
                .check(HealthCheckRequest.getDefaultInstance());
        assertThat(Duration.ofNanos(System.nanoTime() - health)).isLessThan(Duration.ofMillis(250));
    }

    /**
     * Work is CPU, not a wait: ten calls with 40 ms of work each cost the process at least 0.36 s of
     * CPU, however busy the machine (the work is counted in the thread's CPU time), and each handler
     * still runs once.
     */
    @Test
    void workCostsTheReplicaCpuBeforeEveryHandler() throws Exception {
        AtomicInteger worked = new AtomicInteger();
        start(FaultInjection.builder()
                .faults(Faults.builder().work(Duration.ofMillis(40)).build())
                .listener(new FaultListener() {
                    @Override
                    public void worked() {
                        worked.incrementAndGet();
                    }
                }));
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore = os.getProcessCpuTime();

        for (int i = 0; i < 10; i++) {
            assertThat(stock().check(CHECK).getQty()).isEqualTo(3);
        }

        assertThat(Duration.ofNanos(os.getProcessCpuTime() - cpuBefore))
                .as("the process's CPU time over the ten calls")
                .isGreaterThanOrEqualTo(Duration.ofMillis(360));
        assertThat(worked).hasValue(10);
        assertThat(handled).hasValue(10);
    }

    @Test
    void setAndGetThroughTheAdminServiceAndClear() throws Exception {
        FaultInjection faults = start(FaultInjection.builder());
        FaultState state = FaultsGrpc.newBlockingStub(channel)
                .set(FaultSpec.newBuilder()
                        .setStallMs(200)
                        .setStallEveryMs(1000)
                        .setErrorRatio(0.25)
                        .build());
        assertThat(state.getReplica()).isEqualTo("stock-1");
        assertThat(faults.current())
                .isEqualTo(Faults.builder()
                        .delay(Duration.ZERO)
                        .stall(Duration.ofMillis(200), Duration.ofSeconds(1))
                        .errorRatio(0.25)
                        .build());
        assertThat(FaultsGrpc.newBlockingStub(channel)
                        .get(GetFaultsRequest.getDefaultInstance())
                        .getFaults()
                        .getStallEveryMs())
                .isEqualTo(1000);

        FaultsGrpc.newBlockingStub(channel).set(FaultSpec.getDefaultInstance());
        assertThat(faults.current().any()).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "delay_ms -1              | delay_ms: must be 0-60000 ms, got -1 ms",
                "delay_ms 60001           | delay_ms: must be 0-60000 ms, got 60001 ms",
                "stall_ms 200             | stall_every_ms: must be longer than stall (200 ms), got 0 ms",
                "error_ratio 1.5          | error_ratio: must be 0-1, got 1.5",
                "stall_every_ms 3600001   | stall_every_ms: must be 0-3600000 ms, got 3600001 ms",
                "work_ms 1001             | work_ms: must be 0-1000 ms, got 1001 ms",
                "work_ms -1               | work_ms: must be 0-1000 ms, got -1 ms",
            })
    void badValuesAreInvalidArgumentNamingTheFieldAndChangeNothing(String setting, String message) throws Exception {
        FaultInjection faults = start(FaultInjection.builder());
        String[] parts = setting.trim().split(" ");
        FaultSpec.Builder spec = FaultSpec.newBuilder();
        switch (parts[0]) {
            case "delay_ms" -> spec.setDelayMs(Long.parseLong(parts[1]));
            case "stall_ms" -> spec.setStallMs(Long.parseLong(parts[1]));
            case "stall_every_ms" -> spec.setStallEveryMs(Long.parseLong(parts[1]));
            case "work_ms" -> spec.setWorkMs(Long.parseLong(parts[1]));
            default -> spec.setErrorRatio(Double.parseDouble(parts[1]));
        }
        StatusRuntimeException refused = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> FaultsGrpc.newBlockingStub(channel).set(spec.build()));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(refused.getStatus().getDescription()).isEqualTo(message.trim());
        assertThat(faults.current()).isEqualTo(Faults.NONE);
    }

    /** When an answer sent at a time may leave, with a stall of 200 ms every 1000 ms and a delay. */
    @ParameterizedTest(name = "delay {0} ms, arrived {1}, sent {2} -> released {3}")
    @CsvSource({
        // no delay: outside the stall it leaves at once, inside it waits for the stall's end
        "0,   300,   350,   350",
        "0,   1050,  1100,  1200",
        "0,   1199,  1199,  1200",
        "0,   1200,  1200,  1200",
        // a delay first, then the stall if the delay ends inside one
        "100, 850,   850,   950",
        "100, 1050,  1060,  1200",
        "100, 500,   510,   600",
    })
    void releaseTimesFollowTheDelayAndTheStalls(long delayMs, long arrivedMs, long sentMs, long releasedMs) {
        Faults faults = Faults.builder()
                .delay(Duration.ofMillis(delayMs))
                .stall(Duration.ofMillis(200), Duration.ofSeconds(1))
                .errorRatio(0)
                .build();
        long ms = 1_000_000L;
        assertThat(dev.grpcops.fault.internal.FaultInjectionInterceptorAccess.releaseAt(
                        faults, arrivedMs * ms, sentMs * ms))
                .isEqualTo(releasedMs * ms);
    }

    @Test
    void faultsAreCheckedWhenMade() {
        assertThatThrownBy(() -> Faults.builder()
                        .delay(Duration.ofMillis(-1))
                        .stall(Duration.ZERO, Duration.ZERO)
                        .errorRatio(0)
                        .build())
                .isInstanceOf(InvalidFaultException.class)
                .hasMessage("delay must be 0-60000 ms, got -1 ms");
        assertThat(Faults.builder()
                        .delay(Duration.ofMillis(200))
                        .stall(Duration.ofMillis(200), Duration.ofSeconds(1))
                        .work(Duration.ofMillis(2))
                        .errorRatio(0.5)
                        .build())
                .hasToString("delay 200ms, stall 200ms/1000ms, work 2ms, error-ratio 0.5");
        assertThat(Faults.NONE).hasToString("none");
        assertThatThrownBy(
                        () -> Faults.builder().work(Duration.ofNanos(500_000)).build())
                .isInstanceOf(InvalidFaultException.class)
                .hasMessage("work must be whole milliseconds, got PT0.0005S");
    }
}
