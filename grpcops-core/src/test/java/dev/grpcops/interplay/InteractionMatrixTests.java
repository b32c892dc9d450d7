package dev.grpcops.interplay;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.client.InProcessReplicas;
import dev.grpcops.client.InProcessReplicas.Caller;
import dev.grpcops.client.InProcessReplicas.Results;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.client.ServiceConfigs.Balancing;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.retry.HedgeOutcome;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.retry.RetryOutcome;
import dev.grpcops.retry.TokenBucket;
import dev.grpcops.testing.FakeClock;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The interaction matrix of design §16, for the cells the client side decides: one of three in-process
 * Stock replicas turns bad (slow, stalled, erroring, shedding, flapping, restarting, absent at
 * start, or its callers cancel) while the balancer (peak-EWMA or in turn), outlier ejection, the
 * retry tokens, hedging and warm-up all run, on one fake clock. Each test asserts what a user would
 * check: which replica answered, what the callers got, the tokens left, the hedges' outcomes.
 * docs/interplay.md lists every cell of the matrix and the test that shows it.
 */
@Timeout(120)
class InteractionMatrixTests {

    /** The target's name as the limiter knows it: the channel's authority. */
    private static final String TARGET = "replicas";

    /** The balancer's slow start by default ({@code ServiceConfigs.Builder#slowStart}). */
    private static final Duration SLOW_START = Duration.ofSeconds(10);

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    /** gRFC A6's defaults: 10 tokens, 0.1 back per success, extra attempts stop at half. */
    private final TokenBucket tokens = TokenBucket.builder().build();

    private final Map<Object, AtomicInteger> events = new ConcurrentHashMap<>();
    private final RetryListener listener = new RetryListener() {
        @Override
        public void outcome(String target, RetryOutcome outcome) {
            count(outcome);
        }

        @Override
        public void hedge(String target, HedgeOutcome outcome) {
            count(outcome);
        }
    };

    private InProcessReplicas replicas;

    @AfterEach
    void stop() throws InterruptedException {
        if (replicas != null) {
            replicas.close();
        }
    }

    private void count(Object event) {
        events.computeIfAbsent(event, e -> new AtomicInteger()).incrementAndGet();
    }

    private int events(Object event) {
        AtomicInteger count = events.get(event);
        return count == null ? 0 : count.get();
    }

    /** Three replicas, health-checked, with outlier detection's defaults (judged every second). */
    private void start(Balancing balancing) throws Exception {
        start(ServiceConfigs.builder().balancing(balancing));
    }

    private void start(ServiceConfigs.Builder config) throws Exception {
        replicas = new InProcessReplicas(
                clock, 3, config.healthCheck(InProcessReplicas.HEALTH_NAME).build(), 11);
        replicas.call(30, 3);
    }

    /** Retries on the fake clock, drawing on {@link #tokens}; hedging by {@code hedging}, or none. */
    /** Hedges after the 95th percentile of 64 answers, 10 ms at least, up to half as many again as calls. */
    private static final Hedging HEDGING = Hedging.builder()
            .percentile(95)
            .delay(Duration.ofMillis(10), Duration.ofSeconds(1))
            .minSamples(64)
            .maxExtraPercent(50)
            .build();

    private Retry retry(Hedging hedging) {
        return Retry.builder(BudgetRules.DEFAULTS)
                .limiter(tokens)
                .listener(listener)
                .hedging(hedging)
                .scheduler(clock.scheduler())
                .nanoClock(clock.nanoClock())
                .build();
    }

    /** Each call retried (once, on UNAVAILABLE, elsewhere) by {@code retry}. */
    private static Caller retried(Retry retry) {
        return (stub, request) -> retry.call(() -> stub.check(request));
    }

    /** Each call hedged (and retried) by {@code retry}. */
    private static Caller hedged(Retry retry) {
        return (stub, request) -> retry.hedged(() -> stub.check(request));
    }

    /** Calls made while the process warms itself up (as WarmUp's calls are served). */
    private static Caller warmingUp() {
        return (stub, request) -> inWarmUp(() -> stub.check(request));
    }

    /** {@code call} made as the process's own warm-up calls are served. */
    private static <T> T inWarmUp(java.util.function.Supplier<T> call) {
        Context warmUp = WarmUpMark.attachTo(Context.current());
        Context previous = warmUp.attach();
        try {
            return call.get();
        } finally {
            warmUp.detach(previous);
        }
    }

    /** Each call cancelled by its caller {@code afterMs} of fake time after it started. */
    private Caller cancelledAfter(Caller caller, long afterMs) {
        return (stub, request) -> {
            ListenableFuture<CheckReply> call = caller.call(stub, request);
            // cancel(false), as most callers write it: the call must still be cancelled downstream.
            clock.scheduler().schedule(() -> call.cancel(false), afterMs, TimeUnit.MILLISECONDS);
            return call;
        };
    }

    /** Calls for about {@code seconds} of fake time, 3 at a time: what the last 3000 calls saw. */
    private Results callFor(int seconds, Caller caller) throws InterruptedException {
        replicas.run(3000 * (seconds - 1), 3, caller);
        return replicas.run(3000, 3, caller);
    }

    // ---- slow ----

    @Test
    void slow_isAvoidedByPeakEwma_neverEjected_andCostsNoTokens() throws Exception {
        start(Balancing.PEAK_EWMA);
        replicas.replica(0).latency(Duration.ofMillis(50));

        Results results = replicas.run(600, 3, retried(retry(null)));

        assertThat(results.ended(Status.Code.OK)).isEqualTo(600);
        assertThat(results.calls().get(0))
                .as("calls to the slow replica of %s", results.calls())
                .isLessThan(60);
        assertThat(tokens.tokens(TARGET)).as("tokens left").isEqualTo(10.0);
        assertThat(events).as("nothing to retry").isEmpty();
    }

    @Test
    void slow_isNotAFailure_soInTurnItKeepsItsShare() throws Exception {
        start(Balancing.ROUND_ROBIN);
        replicas.replica(0).latency(Duration.ofMillis(20));

        Results results = replicas.run(900, 3, retried(retry(null)));

        assertThat(results.calls().get(0))
                .as("a third of the calls: not ejected (%s)", results.calls())
                .isEqualTo(300);
        assertThat(tokens.tokens(TARGET)).isEqualTo(10.0);
    }

    // ---- stalled ----

    /**
     * A replica that holds its calls: hedges answer them from another replica, the first attempts
     * are cancelled, and cancelled attempts neither eject it nor cost tokens.
     */
    @ParameterizedTest
    @ValueSource(strings = {"PEAK_EWMA", "ROUND_ROBIN"})
    void stalled_callsAreAnsweredByHedgesElsewhere_andTheReplicaIsNeitherEjectedNorCharged(Balancing balancing)
            throws Exception {
        start(balancing);
        Retry retry = retry(HEDGING);
        replicas.run(90, 3, hedged(retry)); // answers for the hedge delay to learn from
        replicas.replica(0).latency(Duration.ofMinutes(5));

        Results results = replicas.run(600, 3, hedged(retry));

        assertThat(results.ended(Status.Code.OK))
                .as("every call answered: %s", results.codes())
                .isEqualTo(600);
        assertThat(events(HedgeOutcome.WON)).as("hedges won").isPositive();
        assertThat(tokens.tokens(TARGET)).as("tokens left").isEqualTo(10.0);
        if (balancing == Balancing.PEAK_EWMA) {
            assertThat(results.calls().get(0))
                    .as("first attempts sent to the stalled replica: %s", results.calls())
                    .isLessThan(60);
        } else {
            assertThat(results.calls().get(0))
                    .as("in turn, never ejected: about a third of the first attempts (%s)", results.calls())
                    .isGreaterThan(150);
        }
    }

    // ---- erroring ----

    @Test
    void erroringInternal_isEjected_andItsErrorsAreNeitherRetriedNorCharged() throws Exception {
        start(Balancing.PEAK_EWMA);
        replicas.replica(0).failWith(Status.INTERNAL.withDescription("broken"));

        Results first = replicas.run(300, 3, retried(retry(null)));
        assertThat(first.ended(Status.Code.INTERNAL))
                .as("the callers see the replica's errors")
                .isPositive();
        assertThat(tokens.tokens(TARGET)).as("INTERNAL costs no token").isEqualTo(10.0);
        assertThat(events(RetryOutcome.ATTEMPTED)).as("INTERNAL is not retried").isZero();

        Results judged = callFor(3, retried(retry(null)));
        assertThat(judged.calls().get(0)).as("ejected: %s", judged.calls()).isZero();
        assertThat(judged.ended(Status.Code.OK)).isEqualTo(3000);
    }

    /**
     * Half of one replica's calls fail UNAVAILABLE: each is retried on another replica while the
     * tokens last, the replica is ejected, and the tokens come back from the successes after.
     */
    @Test
    void erroringUnavailable_isRetriedElsewhereWithinTheTokens_thenEjected_andTheTokensComeBack() throws Exception {
        start(Balancing.ROUND_ROBIN);
        replicas.replica(0).failWith(Status.UNAVAILABLE.withDescription("flaky"), call -> call % 2 == 0);
        Retry retry = retry(null);

        Results first = replicas.run(60, 3, retried(retry));
        assertThat(events(RetryOutcome.ATTEMPTED)).as("retried").isPositive();
        assertThat(tokens.tokens(TARGET)).as("each failure cost a token").isLessThan(10.0);
        assertThat(first.ended(Status.Code.OK) + first.ended(Status.Code.UNAVAILABLE))
                .isEqualTo(60);

        Results judged = callFor(3, retried(retry));
        assertThat(judged.calls().get(0)).as("ejected: %s", judged.calls()).isZero();
        assertThat(judged.ended(Status.Code.OK)).isEqualTo(3000);
        assertThat(tokens.tokens(TARGET)).as("refilled by the successes").isEqualTo(10.0);
    }

    // ---- shedding ----

    /**
     * A replica shedding load answers RESOURCE_EXHAUSTED: the callers get it at once (no retry, no
     * token, as A6), and with pushback it costs a token (A6's signal to slow down), yet the replica
     * is never ejected: its capacity is what is short.
     */
    @Test
    void shedding_isNotRetried_costsATokenOnlyWithPushback_andIsNeverEjected() throws Exception {
        start(Balancing.ROUND_ROBIN);
        replicas.replica(0).failWith(Status.RESOURCE_EXHAUSTED.withDescription("shedding"), call -> call % 2 == 0);
        Retry retry = retry(null);

        Results results = callFor(3, retried(retry));
        assertThat(results.calls().get(0))
                .as("in turn, never ejected: a third of the calls (%s)", results.calls())
                .isEqualTo(1000);
        assertThat(results.ended(Status.Code.RESOURCE_EXHAUSTED)).isEqualTo(500);
        assertThat(events(RetryOutcome.ATTEMPTED)).isZero();
        assertThat(tokens.tokens(TARGET)).isEqualTo(10.0);

        Metadata pushback = new Metadata();
        pushback.put(Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER), "-1");
        replicas.replica(0).failWith(Status.RESOURCE_EXHAUSTED.withDescription("shedding"), pushback, call -> true);
        replicas.run(3, 3, retried(retry));
        // Pushback is A6's failure (-1); each of the 2 answers puts 0.1 back, but not above the 10 the
        // bucket holds: 9.2 when the failure came first, 9.1 when one answer came before it, 9.0 when
        // both did (the calls run on the channel's threads, in no fixed order).
        assertThat(tokens.tokens(TARGET))
                .as("pushback is A6's failure; the 2 answers put 0.1 back each")
                .isIn(9.0, 9.1, 9.2);
        assertThat(events(RetryOutcome.ATTEMPTED)).isZero();
    }

    @Test
    void shedding_takesTheReplicaOutOfPeakEwmasFavour() throws Exception {
        start(Balancing.PEAK_EWMA);
        replicas.replica(0).latency(Duration.ZERO).failWith(Status.RESOURCE_EXHAUSTED.withDescription("shedding"));

        Results results = replicas.run(300, 3, Caller.PLAIN);

        assertThat(results.calls().get(0))
                .as("a fast refusal does not make it look fast: %s", results.calls())
                .isLessThan(15);
        assertThat(results.ended(Status.Code.OK)).isGreaterThan(285);
    }

    // ---- a caller cancelling ----

    @Test
    void callersCancelling_costNoTokens_startNoRetries_andEjectNobody() throws Exception {
        start(Balancing.ROUND_ROBIN);
        for (int i = 0; i < 3; i++) {
            replicas.replica(i).latency(Duration.ofMillis(10));
        }
        Retry retry = retry(null);

        Results cancelled = replicas.run(900, 3, cancelledAfter(retried(retry), 2));
        assertThat(cancelled.ended(Status.Code.CANCELLED)).isEqualTo(900);
        assertThat(replicas.cancelled())
                .as("cancellations that reached the replicas")
                .isEqualTo(900);

        Results after = replicas.run(900, 3, retried(retry));
        assertThat(after.calls()).as("nobody ejected").containsExactly(300, 300, 300);
        assertThat(after.ended(Status.Code.OK)).isEqualTo(900);
        assertThat(tokens.tokens(TARGET)).isEqualTo(10.0);
        assertThat(events).as("nothing retried or hedged").isEmpty();
    }

    @Test
    void callersCancellingHedgedCalls_scoreNoHedge() throws Exception {
        start(Balancing.PEAK_EWMA);
        Retry retry = retry(HEDGING);
        replicas.run(90, 3, hedged(retry));
        for (int i = 0; i < 3; i++) {
            replicas.replica(i).latency(Duration.ofMillis(100));
        }

        Results cancelled = replicas.run(90, 3, cancelledAfter(hedged(retry), 30));

        assertThat(cancelled.ended(Status.Code.CANCELLED)).isEqualTo(90);
        assertThat(events(HedgeOutcome.SENT)).as("hedged after 10 ms").isPositive();
        assertThat(events(HedgeOutcome.WON) + events(HedgeOutcome.LOST))
                .as("the caller's cancellation scores neither")
                .isZero();
    }

    // ---- flapping and restarting ----

    /**
     * A replica back from a restart (the same address, its container restarted) or a health flap
     * starts at its ready peers' cost: not at the near-nothing its cost decayed to while it was away,
     * which would win it nearly every pick until its first answers, nor ejected for having been away;
     * and in slow start, so that it takes less than its share at first and its share after the window.
     */
    @ParameterizedTest
    @ValueSource(strings = {"restart", "health flap"})
    void backFromRestartOrFlap_takesItsShareNotTheBulk(String away) throws Exception {
        start(ServiceConfigs.builder().decay(Duration.ofSeconds(1)));
        clock.forward(SLOW_START); // the three past their first
        for (int i = 0; i < 3; i++) {
            replicas.replica(i).latency(Duration.ofMillis(5));
        }
        replicas.call(300, 3);
        if (away.equals("restart")) {
            replicas.replica(0).restart(() -> {
                awaitCalls(0, 0); // the balancer has seen it go: it is away from here
                callFor(3, Caller.PLAIN);
            });
        } else {
            replicas.replica(0).serving(false);
            awaitCalls(0, 0);
            callFor(3, Caller.PLAIN);
            replicas.replica(0).serving(true);
            replicas.replica(0).awaitOffered();
        }

        List<Integer> burst = replicas.call(30, 30);
        assertThat(burst.get(0))
                .as("of 30 calls started at once, in its slow start, the returning replica's: %s", burst)
                .isLessThanOrEqualTo(10);

        clock.forward(SLOW_START);
        replicas.call(30, 3); // each replica heard from again after the quiet
        List<Integer> later = replicas.call(30, 30);
        assertThat(later.get(0))
                .as("of 30 calls started at once, after its slow start, the returning replica's: %s", later)
                .isBetween(5, 15);
    }

    @Test
    void absentAtStart_aReplicaListedLaterTakesItsShareNotTheBulk() throws Exception {
        start(ServiceConfigs.builder().decay(Duration.ofSeconds(1)));
        for (int i = 0; i < 3; i++) {
            replicas.replica(i).latency(Duration.ofMillis(5));
        }
        replicas.call(300, 3);
        InProcessReplicas.Replica added =
                replicas.add().latency(Duration.ofMillis(5)).awaitOffered();

        List<Integer> burst = replicas.call(40, 40);

        assertThat(burst.get(3))
                .as("of 40 calls started at once, the new replica's share: %s", burst)
                .isBetween(5, 16);
        assertThat(added.calls()).isEqualTo(burst.get(3));
    }

    /**
     * A replica listed before it listens (an endpoint published early) gets no calls and no failure
     * counted against it, so it is not ejected: once it listens it takes its share at once.
     */
    @Test
    void absentAtStart_aListedReplicaNotYetListeningGetsNoCallsAndIsNotEjectedForIt() throws Exception {
        start(Balancing.ROUND_ROBIN);
        InProcessReplicas.Replica late = replicas.addAbsent();

        Results meanwhile = callFor(3, Caller.PLAIN);
        assertThat(meanwhile.ended(Status.Code.OK)).as("no call failed for it").isEqualTo(3000);
        assertThat(late.calls()).isZero();

        late.listen().awaitOffered();
        Results after = replicas.run(400, 4, Caller.PLAIN);
        assertThat(after.calls()).as("in turn, a quarter each: nobody ejected").containsExactly(100, 100, 100, 100);
    }

    /**
     * A replica restarted cold (slow for its first calls) beside warm peers: hedges answer for it
     * from another replica, so every call succeeds, and what it answered too late decides nothing.
     */
    @Test
    void restarting_aColdReplicaIsCoveredByHedgesToItsPeers() throws Exception {
        start(Balancing.ROUND_ROBIN);
        Retry retry = retry(HEDGING);
        replicas.run(90, 3, hedged(retry));

        replicas.replica(0).restart(() -> replicas.run(30, 3, hedged(retry)));
        replicas.replica(0).latency(Duration.ofMillis(300)); // cold: its JIT not warm yet
        Results results = replicas.run(300, 3, hedged(retry));

        assertThat(results.ended(Status.Code.OK)).as("%s", results.codes()).isEqualTo(300);
        assertThat(events(HedgeOutcome.WON))
                .as("hedges won for the cold replica")
                .isPositive();
        assertThat(replicas.cancelled())
                .as("its late answers cancelled, not waited for")
                .isPositive();
    }

    /**
     * A replica restarting is out of the picks while its connection is refused, so the little that
     * failed as it went down does not eject it: back, it takes its turn at once.
     */
    @Test
    void restarting_isNotEjectedForHavingBeenAway() throws Exception {
        start(Balancing.ROUND_ROBIN);
        replicas.replica(0).restart(() -> callFor(3, Caller.PLAIN));

        Results back = replicas.run(300, 3, Caller.PLAIN);
        assertThat(back.calls()).as("in turn, nobody out").containsExactly(100, 100, 100);
        assertThat(back.ended(Status.Code.OK)).isEqualTo(300);
    }

    // ---- warm-up ----

    /**
     * The process's warm-up calls find replica 0 slow and failing and replica 1 shedding with
     * pushback (downstreams themselves warming up): the balancer learns nothing from them, so
     * neither is shunned nor ejected once the traffic starts, and they spend no tokens.
     */
    @Test
    void warmUpCalls_leaveNoLatencyNoFailuresAndNoTokenSpent() throws Exception {
        start(Balancing.PEAK_EWMA);
        replicas.replica(0).latency(Duration.ofMillis(200)).failWith(Status.INTERNAL, call -> call % 2 == 0);
        Metadata pushback = new Metadata();
        pushback.put(Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER), "100");
        replicas.replica(1).failWith(Status.RESOURCE_EXHAUSTED.withDescription("shedding"), pushback, call -> true);
        Retry retry = retry(HEDGING);

        Results warmUp =
                replicas.run(300, 3, (stub, request) -> inWarmUp(() -> retry.hedged(() -> stub.check(request))));
        assertThat(warmUp.calls().get(0))
                .as("the warm-up reached the bad replica")
                .isPositive();
        replicas.replica(0).latency(Duration.ofMillis(1)).failWith(null);
        replicas.replica(1).failWith(null);
        clock.forward(Duration.ofSeconds(2)); // outlier detection judged twice

        Results traffic = replicas.run(300, 3, retried(retry));

        assertThat(traffic.calls().get(0))
                .as("replica 0 neither shunned nor ejected: %s", traffic.calls())
                .isGreaterThan(60);
        assertThat(tokens.tokens(TARGET)).isEqualTo(10.0);
        assertThat(events).as("no retry or hedge for the warm-up").isEmpty();
    }

    @Test
    void warmUpCallsWithoutRetry_feedNoBalancerStatisticsEither() throws Exception {
        start(Balancing.PEAK_EWMA);
        replicas.replica(0).latency(Duration.ofMillis(200));

        replicas.run(300, 3, warmingUp());
        replicas.replica(0).latency(Duration.ofMillis(1));

        Results traffic = replicas.run(300, 3, Caller.PLAIN);
        // Shunned for the warm-up's 200 ms it would get a probe or two; a share of a sixth or more
        // (seen: 50 to over 100 of 300) is a replica judged by its own answers.
        assertThat(traffic.calls().get(0))
                .as("not shunned for the warm-up's latency: %s", traffic.calls())
                .isGreaterThanOrEqualTo(30);
    }

    // ---- helpers ----

    /** Calls until replica {@code index} gets {@code expected} of 30. */
    private void awaitCalls(int index, int expected) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (replicas.call(30, 3).get(index) != expected) {
            if (System.nanoTime() > until) {
                throw new AssertionError("replica " + index + " never got " + expected + " of 30 calls");
            }
        }
    }
}
