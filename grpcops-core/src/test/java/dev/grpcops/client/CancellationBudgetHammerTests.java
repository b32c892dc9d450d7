package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admission.Caller;
import dev.grpcops.admission.Criticality;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A channel's cancellation budget under callers on four threads that start calls and cancel
 * them (themselves, or by leaving) while the replica answers others, with a backlog bound small
 * enough to drop: every call ends exactly once for its caller, and once the calls have ended
 * nothing waits in the budget.
 */
@Timeout(60)
class CancellationBudgetHammerTests {

    private static final int THREADS = 4;
    private static final int CALLS_PER_THREAD = 1_500;

    private final ScheduledExecutorService answers = Executors.newScheduledThreadPool(2);
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Queue<Throwable> failures = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        answers.shutdownNow();
    }

    @Test
    void everyCallEndsOnceAndNothingIsLeftWaiting() throws Exception {
        String name = InProcessServerBuilder.generateName();
        Server server = InProcessServerBuilder.forName(name)
                .executor(Executors.newFixedThreadPool(2))
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                        answers.schedule(
                                () -> {
                                    try {
                                        responses.onNext(CheckReply.getDefaultInstance());
                                        responses.onCompleted();
                                    } catch (RuntimeException cancelledMeanwhile) {
                                        // the caller left: nobody to answer
                                    }
                                },
                                ThreadLocalRandom.current().nextInt(3),
                                TimeUnit.MILLISECONDS);
                    }
                })
                .build()
                .start();
        closeables.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        Map<CancellationBudget.Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        CancellationBudget budget = CancellationBudget.builder()
                .perSecond(2_000)
                .burst(50)
                .maxDeferred(40)
                .listener(outcome -> outcomes.computeIfAbsent(outcome, o -> new AtomicInteger())
                        .incrementAndGet())
                .build();
        ManagedChannel channel =
                InProcessChannelBuilder.forName(name).intercept(budget).build();
        budget.follow(channel);
        closeables.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));

        Map<Integer, AtomicInteger> closes = new ConcurrentHashMap<>();
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(THREADS);
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            new Thread(() -> {
                        try {
                            ThreadLocalRandom random = ThreadLocalRandom.current();
                            for (int i = 0; i < CALLS_PER_THREAD; i++) {
                                int id = thread * CALLS_PER_THREAD + i;
                                Context.CancellableContext leaving =
                                        Context.current().withCancellation();
                                Context caller = Caller.of("caller-" + random.nextInt(3), null, Criticality.DEFAULT)
                                        .attachTo(leaving);
                                ClientCall<CheckRequest, CheckReply> call = caller.call(
                                        () -> channel.newCall(StockGrpc.getCheckMethod(), CallOptions.DEFAULT));
                                AtomicInteger closed = closes.computeIfAbsent(id, k -> new AtomicInteger());
                                caller.run(() -> {
                                    call.start(
                                            new ClientCall.Listener<>() {
                                                @Override
                                                public void onClose(Status status, Metadata trailers) {
                                                    closed.incrementAndGet();
                                                }
                                            },
                                            new Metadata());
                                    call.request(1);
                                    call.sendMessage(CheckRequest.getDefaultInstance());
                                    call.halfClose();
                                });
                                calls.incrementAndGet();
                                switch (random.nextInt(4)) {
                                    case 0 -> leaving.cancel(null); // the caller leaves
                                    case 1 -> call.cancel("gave up", null);
                                    case 2 ->
                                        answers.schedule(
                                                () -> leaving.cancel(null), random.nextInt(3), TimeUnit.MILLISECONDS);
                                    default -> {} // waits for the answer
                                }
                            }
                        } catch (Throwable e) {
                            failures.add(e);
                        } finally {
                            done.countDown();
                        }
                    })
                    .start();
        }
        assertThat(done.await(40, TimeUnit.SECONDS)).isTrue();
        assertThat(failures).isEmpty();
        Awaitility.await("every call closed")
                .atMost(Duration.ofSeconds(20))
                .until(() ->
                        closes.values().stream().mapToInt(AtomicInteger::get).sum() >= calls.get());
        assertThat(closes.values()).as("each call closed exactly once").allMatch(count -> count.get() == 1);
        Awaitility.await("no deferred cancellation left")
                .atMost(Duration.ofSeconds(20))
                .until(() -> budget.waiting() == 0);
        assertThat(outcomes)
                .as("the budget was used, and overrun")
                .containsKeys(CancellationBudget.Outcome.SENT, CancellationBudget.Outcome.DEFERRED);
    }
}
