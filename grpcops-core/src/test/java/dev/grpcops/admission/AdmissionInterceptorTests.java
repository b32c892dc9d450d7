package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Context;
import io.grpc.ForwardingServerCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Admission in front of a real gRPC server (in-process transport, direct executor). */
@Timeout(30)
class AdmissionInterceptorTests {

    /** A Stock that holds every Check until the test answers it, and notes who it served. */
    private static final class HeldStock extends StockGrpc.StockImplBase {
        final BlockingQueue<StreamObserver<CheckReply>> held = new LinkedBlockingQueue<>();
        final List<String> served = new CopyOnWriteArrayList<>();
        final List<Long> deadlinesMillis = new CopyOnWriteArrayList<>();
        /** The thread each handler ran on. */
        final List<String> threads = new CopyOnWriteArrayList<>();

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
            if (request.getSku().equals("boom")) {
                throw new IllegalStateException("a handler bug");
            }
            threads.add(Thread.currentThread().getName());
            served.add(Caller.current()
                    .map(c -> c.id() + "/" + c.criticality().value())
                    .orElse("none"));
            deadlinesMillis.add(
                    Context.current().getDeadline() == null
                            ? -1
                            : Context.current().getDeadline().timeRemaining(TimeUnit.MILLISECONDS));
            held.add(reply);
        }

        void answerOne() throws InterruptedException {
            StreamObserver<CheckReply> reply = held.poll(10, TimeUnit.SECONDS);
            assertThat(reply).as("a held call").isNotNull();
            reply.onNext(CheckReply.getDefaultInstance());
            reply.onCompleted();
        }
    }

    private final List<String> rejections = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final HeldStock stock = new HeldStock();
    private Admission admission;
    private ManagedChannel channel;
    /** Admission's clock and timer when a test sets it before {@code start}; the system's otherwise. */
    private dev.grpcops.testing.FakeClock time;

    /** The server's executor when a test sets it before {@code start}: queued calls start on it. */
    private java.util.concurrent.ExecutorService executor;

    /** Throws from startCall, as an interceptor inside admission or a service that fails to load might. */
    private static final ServerInterceptor FAILS_TO_START = new ServerInterceptor() {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
            if (headers.containsKey(Metadata.Key.of("x-fail-to-start", Metadata.ASCII_STRING_MARSHALLER))) {
                throw new ExceptionInInitializerError("a service class that failed to load");
            }
            return next.startCall(call, headers);
        }
    };

    private void start(int limit, PriorityLevelConfig level) throws Exception {
        start(limit, level, FAILS_TO_START, null);
    }

    /** Stock behind {@code inner}, admission and (when not null) {@code outer}, outermost last. */
    private void start(int limit, PriorityLevelConfig level, ServerInterceptor inner, ServerInterceptor outer)
            throws Exception {
        Admission.Builder builder = Admission.builder(AdmissionConfig.builder()
                        .limit(limit)
                        .levels(List.of(level))
                        .maxWait(Duration.ofSeconds(10))
                        .retryPushback(Duration.ofSeconds(1), Duration.ofSeconds(32))
                        .build())
                .listener(new AdmissionListener() {
                    @Override
                    public void rejected(String levelName, RejectReason reason) {
                        rejections.add(levelName + "/" + reason.label());
                    }
                });
        if (time != null) {
            builder.nanoClock(time::nanoTime).timer(time.timer());
        }
        admission = builder.build();
        Map<Criticality, String> levels = new java.util.EnumMap<>(Criticality.class);
        for (Criticality criticality : Criticality.values()) {
            levels.put(criticality, level.name());
        }
        CallerPolicy policy = CallerPolicy.builder().criticalityLevels(levels).build();
        AdmissionInterceptors.ServerBuilder admit =
                AdmissionInterceptors.server(admission).policy(policy).exemptServices(Set.of(HealthGrpc.SERVICE_NAME));
        if (executor != null) {
            admit.executor(executor);
            closeables.add(executor::shutdownNow);
        }
        ServerInterceptor interceptor = admit.build();
        String name = InProcessServerBuilder.generateName();
        Server server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(
                        outer == null
                                ? ServerInterceptors.intercept(stock, inner, interceptor)
                                : ServerInterceptors.intercept(stock, inner, interceptor, outer))
                .addService(ServerInterceptors.intercept(new HealthStatusManager().getHealthService(), interceptor))
                .build()
                .start();
        closeables.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        closeables.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    private StockGrpc.StockFutureStub as(String caller, String criticality) {
        Metadata headers = new Metadata();
        if (caller != null) {
            headers.put(Caller.CALLER_KEY, caller);
        }
        if (criticality != null) {
            headers.put(Caller.CRITICALITY_KEY, criticality);
        }
        return StockGrpc.newFutureStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what)
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5))
                .until(condition::getAsBoolean);
    }

    @Test
    void aQueuedCallStartsWhenASeatFreesWithItsCallerAndDeadline() throws Exception {
        start(1, PriorityLevelConfig.of("default", 1));
        var first = as("alpha", "critical").check(CheckRequest.getDefaultInstance());
        var second =
                as("beta", "sheddable").withDeadlineAfter(5, TimeUnit.SECONDS).check(CheckRequest.getDefaultInstance());
        await("the second call to queue", () -> admission.level("default").inQueue() == 1);
        assertThat(stock.served).containsExactly("alpha/critical");

        stock.answerOne();
        first.get(5, TimeUnit.SECONDS);
        await("the second call to start", () -> stock.served.size() == 2);
        assertThat(stock.served.get(1)).isEqualTo("beta/sheddable");
        assertThat(stock.deadlinesMillis.get(1))
                .as("the queued call's handler sees its own deadline")
                .isBetween(1L, 5_000L);
        stock.answerOne();
        second.get(5, TimeUnit.SECONDS);
        assertThat(admission.level("default").executingSeats()).isZero();
    }

    /**
     * A call that waited for its seat starts on the server's executor, not on the thread that freed
     * the seat (here the test's own, answering the first call; in a service, another call's thread
     * or a client's event loop). Without an executor (a direct-executor server) it starts there.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void aQueuedCallStartsOnTheServersExecutor(boolean withExecutor) throws Exception {
        if (withExecutor) {
            executor =
                    java.util.concurrent.Executors.newSingleThreadExecutor(task -> new Thread(task, "server-executor"));
        }
        start(1, PriorityLevelConfig.of("default", 1));
        var first = as("alpha", "default").check(CheckRequest.getDefaultInstance());
        var second = as("beta", "default").check(CheckRequest.getDefaultInstance());
        await("the second call to queue", () -> admission.level("default").inQueue() == 1);

        stock.answerOne();
        first.get(5, TimeUnit.SECONDS);
        await("the second call to start", () -> stock.served.size() == 2);
        assertThat(stock.threads.get(1))
                .as("where the queued call's handler ran")
                .isEqualTo(
                        withExecutor
                                ? "server-executor"
                                : Thread.currentThread().getName());
        assertThat(stock.threads.get(0))
                .as("a call seated at once starts where it arrived")
                .isNotEqualTo("server-executor");
        stock.answerOne();
        second.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aCallWhoseTurnComesTooLateIsAnsweredDeadlineExceededWithoutRunning() throws Exception {
        time = new dev.grpcops.testing.FakeClock();
        start(1, PriorityLevelConfig.of("default", 1));
        var first = as("alpha", null).check(CheckRequest.getDefaultInstance());
        var late = as("beta", null).withDeadlineAfter(5, TimeUnit.SECONDS).check(CheckRequest.getDefaultInstance());
        await("the second call to queue", () -> admission.level("default").inQueue() == 1);

        // On admission's clock the first call held its seat almost all of the second's budget.
        time.forwardMillis(4_990);
        stock.answerOne();
        first.get(5, TimeUnit.SECONDS);

        assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(StatusRuntimeException.class)
                .cause()
                .satisfies(e -> {
                    Status status = ((StatusRuntimeException) e).getStatus();
                    assertThat(status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                    assertThat(status.getDescription()).contains("'default'").contains("cannot-finish");
                    assertThat(((StatusRuntimeException) e)
                                    .getTrailers()
                                    .containsKey(Metadata.Key.of(
                                            "grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER)))
                            .as("no pushback: the budget ran out, not the server")
                            .isFalse();
                });
        assertThat(stock.served).as("its handler never ran").hasSize(1);
        assertThat(rejections).containsExactly("default/cannot-finish");
        assertThat(admission.level("default").executingSeats()).isZero();
    }

    @Test
    void aRejectedCallIsToldResourceExhaustedWithLevelReasonAndPushback() throws Exception {
        start(1, PriorityLevelConfig.builder("default").queues(0).build());
        as("alpha", null).check(CheckRequest.getDefaultInstance());
        await("the first call to run", () -> stock.served.size() == 1);

        Metadata[] trailers = new Metadata[1];
        assertThatThrownBy(() -> StockGrpc.newBlockingStub(channel).check(CheckRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(e.getStatus().getDescription())
                            .contains("'default'")
                            .contains("concurrency-limit");
                    trailers[0] = e.getTrailers();
                });
        assertThat(trailers[0].get(Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER)))
                .isEqualTo("1000");
        assertThat(rejections).containsExactly("default/concurrency-limit");
    }

    @Test
    void aHandlerThatThrowsAfterWaitingEndsItsCallUnknownAndFreesItsSeat() throws Exception {
        start(1, PriorityLevelConfig.of("default", 1));
        var first = as("alpha", null).check(CheckRequest.getDefaultInstance());
        var failing =
                as("beta", null).check(CheckRequest.newBuilder().setSku("boom").build());
        await("the failing call to queue", () -> admission.level("default").inQueue() == 1);

        stock.answerOne();
        first.get(5, TimeUnit.SECONDS);

        assertThatThrownBy(() -> failing.get(5, TimeUnit.SECONDS))
                .cause()
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
        await("the seat to be free", () -> admission.level("default").executingSeats() == 0);
        as("gamma", null).check(CheckRequest.getDefaultInstance());
        await("the next call to run", () -> stock.served.size() == 2);
    }

    @Test
    void aCallThatFailsToStartWithAnErrorEndsUnknownAndNeverKeepsItsSeat() throws Exception {
        start(1, PriorityLevelConfig.of("default", 1));
        Metadata failing = new Metadata();
        failing.put(Metadata.Key.of("x-fail-to-start", Metadata.ASCII_STRING_MARSHALLER), "1");
        StockGrpc.StockFutureStub failingStub =
                StockGrpc.newFutureStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(failing));
        // With a seat free at once, and after waiting for one.
        assertThatThrownBy(() ->
                        failingStub.check(CheckRequest.getDefaultInstance()).get(5, TimeUnit.SECONDS))
                .cause()
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
        var holder = as("alpha", null).check(CheckRequest.getDefaultInstance());
        var queued = failingStub.check(CheckRequest.getDefaultInstance());
        await("the failing call to queue", () -> admission.level("default").inQueue() == 1);
        stock.answerOne();
        holder.get(5, TimeUnit.SECONDS);
        assertThatThrownBy(() -> queued.get(5, TimeUnit.SECONDS))
                .cause()
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
        await("no seat kept", () -> admission.level("default").executingSeats() == 0);
    }

    @Test
    void healthChecksAreNeverQueuedOrRejected() throws Exception {
        start(1, PriorityLevelConfig.builder("default").queues(0).build());
        as("alpha", null).check(CheckRequest.getDefaultInstance());
        await("the only seat to be taken", () -> stock.served.size() == 1);

        HealthCheckResponse health = HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(HealthCheckRequest.getDefaultInstance());
        assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    }

    @Test
    void aCallCancelledWhileQueuedLeavesItsQueueAtOnceAndNeverRuns() throws Exception {
        start(1, PriorityLevelConfig.of("default", 1));
        as("alpha", null).check(CheckRequest.getDefaultInstance());
        Context.CancellableContext cancellable = Context.current().withCancellation();
        var queued = cancellable.call(() -> as("beta", null).check(CheckRequest.getDefaultInstance()));
        await("the call to queue", () -> admission.level("default").inQueue() == 1);

        cancellable.cancel(null);
        await("the queue to empty", () -> admission.level("default").inQueue() == 0);
        assertThat(rejections).containsExactly("default/cancelled");
        stock.answerOne();
        assertThatThrownBy(() -> queued.get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(StatusRuntimeException.class)
                .cause()
                .satisfies(
                        e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
                                .isEqualTo(Status.Code.CANCELLED));
        await("the seat to be free", () -> admission.level("default").executingSeats() == 0);
        assertThat(stock.served).hasSize(1);
    }

    @Test
    void queuedCallsEndUnavailableWhenTheServerDrains() throws Exception {
        start(1, PriorityLevelConfig.of("default", 1));
        as("alpha", null).check(CheckRequest.getDefaultInstance());
        var queued = as("beta", null).check(CheckRequest.getDefaultInstance());
        await("the call to queue", () -> admission.level("default").inQueue() == 1);

        admission.drain();

        assertThatThrownBy(() -> queued.get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(StatusRuntimeException.class)
                .cause()
                .satisfies(
                        e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
                                .isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void theCallerAndItsGrantedCriticalityGoDownstreamWithEveryCall() throws Exception {
        start(10, PriorityLevelConfig.of("default", 1));
        List<Metadata> seenDownstream = new CopyOnWriteArrayList<>();
        String name = InProcessServerBuilder.generateName();
        Server back = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new StockGrpc.StockImplBase() {
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                                reply.onNext(CheckReply.getDefaultInstance());
                                reply.onCompleted();
                            }
                        },
                        new ServerInterceptor() {
                            @Override
                            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                                    ServerCall<ReqT, RespT> call,
                                    Metadata headers,
                                    ServerCallHandler<ReqT, RespT> next) {
                                seenDownstream.add(headers);
                                return next.startCall(call, headers);
                            }
                        }))
                .build()
                .start();
        closeables.add(() -> back.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        ManagedChannel toBack = InProcessChannelBuilder.forName(name)
                .directExecutor()
                .intercept(AdmissionInterceptors.callerForwarding())
                .build();
        closeables.add(() -> toBack.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));

        as("mobile-app", "critical").check(CheckRequest.getDefaultInstance());
        as(null, null).check(CheckRequest.getDefaultInstance());
        await("two calls served", () -> stock.served.size() == 2);
        assertThat(stock.served.get(0)).isEqualTo("mobile-app/critical");
        assertThat(stock.served.get(1))
                .as("no caller named: the peer address stands in")
                .doesNotStartWith("none")
                .endsWith("/default");

        // A call made downstream while serving (in the served call's context), as Pricing calls Stock.
        Caller caller = CallerPolicy.builder()
                .everyCriticalityTo("default")
                .callerCap("mobile-app", Criticality.DEFAULT)
                .build()
                .classify("mobile-app", "critical", null);
        caller.attachTo(Context.current())
                .run(() -> StockGrpc.newBlockingStub(toBack).check(CheckRequest.getDefaultInstance()));
        assertThat(seenDownstream).hasSize(1);
        assertThat(seenDownstream.get(0).get(Caller.CALLER_KEY)).isEqualTo("mobile-app");
        assertThat(seenDownstream.get(0).get(Caller.CRITICALITY_KEY))
                .as("the granted criticality (default, which is what no header means), not the claimed critical")
                .isNull();
        Caller.of("checkout", null, Criticality.CRITICAL)
                .attachTo(Context.current())
                .run(() -> StockGrpc.newBlockingStub(toBack).check(CheckRequest.getDefaultInstance()));
        assertThat(seenDownstream.get(1).get(Caller.CRITICALITY_KEY)).isEqualTo("critical");
    }

    @Test
    void withTheBudgetInterceptorOutsideEveryCallbackSeesBothTheBudgetAndTheCaller() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        ServerInterceptor recording = new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                    ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
                        next.startCall(call, headers)) {
                    @Override
                    public void onHalfClose() {
                        seen.add("halfClose " + context());
                        super.onHalfClose();
                    }

                    @Override
                    public void onComplete() {
                        seen.add("complete " + context());
                        super.onComplete();
                    }
                };
            }

            private String context() {
                return Budget.current().map(b -> "budget").orElse("no budget") + ", "
                        + Caller.current().map(Caller::id).orElse("no caller");
            }
        };
        start(
                1,
                PriorityLevelConfig.of("default", 1),
                recording,
                BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                        .excludedServices(Set.of())
                        .build()
                        .server());

        var first = as("alpha", null).check(CheckRequest.getDefaultInstance()); // finds the seat free
        var second = as("beta", null).check(CheckRequest.getDefaultInstance()); // waits for it
        await("the second call to queue", () -> admission.level("default").inQueue() == 1);
        stock.answerOne();
        first.get(5, TimeUnit.SECONDS);
        stock.answerOne();
        second.get(5, TimeUnit.SECONDS);

        await("both calls to complete", () -> seen.size() == 4);
        assertThat(seen)
                .containsExactlyInAnyOrder(
                        "halfClose budget, alpha",
                        "complete budget, alpha",
                        "halfClose budget, beta",
                        "complete budget, beta");
    }
}
