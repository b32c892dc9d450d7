package dev.grpcops.simulation;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.AdmissionProbe;
import dev.grpcops.admission.AdmissionRequest;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.Criticality;
import dev.grpcops.admission.Rejection;
import dev.grpcops.admission.Ticket;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.client.BalancerProbe;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.internal.ServedSeat;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryBudget;
import dev.grpcops.retry.RetryLimiter;
import dev.grpcops.retry.TokenBucket;
import dev.grpcops.testing.FakeClock;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The library's mechanisms together, deterministic: one thread, one fake clock, one seeded random
 * source. Callers of a {@link Scenario} call a front hop (Edge's part: the library's real
 * {@link Admission}, seats by width, a budget per call) that fans each call out to replicas through
 * the library's real client side: {@link Retry} with hedging and its limiters, the budget
 * interceptor, caller forwarding, the {@link CancellationBudget} and the peak-EWMA balancer with
 * outlier ejection and slow start, over a {@link SimChannel} to {@link SimReplica}s that have their
 * own real admission and the scenario's faults. After every millisecond the invariants are checked
 * (see {@link #check}); a seed that breaks one fails with the seed, the time and what broke.
 */
final class Simulation {

    /** The front call a downstream call is made for, in the context it is made in. */
    static final Context.Key<FrontCall> FRONT = Context.key("sim-front-call");

    /** A replica passed over this long while it answers fine is starved, if the channel picked at least {@link #SHARE_MIN_PICKS}. */
    static final long SHARE_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(3);

    static final int SHARE_MIN_PICKS = 60;

    /** What the library's keepalive finds a silent connection in: ping after 10 s quiet, dead 5 s later. */
    static final long KEEPALIVE_DETECT_NANOS = TimeUnit.SECONDS.toNanos(15);

    final Scenario scenario;
    final FakeClock clock = new FakeClock();
    private final SplittableRandom random;
    final List<SimReplica> replicas = new ArrayList<>();
    final SimChannel network;
    private final Channel stack;
    private final Admission front;
    private final Retry retry;
    private final CancellationBudget cancellations;
    private final TokenBucket tokens;
    private final BudgetRules rules = BudgetRules.DEFAULTS;
    private final List<String> violations = new ArrayList<>();

    private final List<FrontCall> calls = new ArrayList<>();
    private final Map<String, Map<String, Integer>> outcomes = new TreeMap<>();
    /** What the mechanisms did, counted: hedges, retries, cancellations, balancer decisions. */
    private final Map<String, Integer> events = new TreeMap<>();
    /** Per flow at the front: calls waiting in admission now, and what the current window saw of it. */
    private final Map<String, FlowWindow> fairness = new TreeMap<>();

    private long windowStart;

    /** Fairness is judged over windows of this, among flows that had calls waiting all through one. */
    static final long FAIRNESS_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** A flow backlogged all window long gets at least this share of an equal share of its level's seats. */
    static final double FAIR_SHARE_FLOOR = 0.25;

    private static final class FlowWindow {
        final String level;
        int waiting;
        boolean backloggedAllWindow = true;
        long seats;

        FlowWindow(String level) {
            this.level = level;
        }
    }

    /** Per replica: when it was last seen answering fine and offered, and its calls since then. */
    private final Map<SimReplica, long[]> shareWatch = new HashMap<>();

    private final long endNanos;
    private boolean callersStopped;

    Simulation(Scenario scenario) {
        this.scenario = scenario;
        this.random = new SplittableRandom(scenario.seed());
        this.endNanos = clock.nanoTime() + scenario.length().toNanos();
        this.windowStart = clock.nanoTime(); // the clock does not start at 0: the first window begins now
        for (int i = 0; i < scenario.replicas().size(); i++) {
            replicas.add(new SimReplica(i, scenario.replicas().get(i), this));
        }
        SplittableRandom picks = new SplittableRandom(scenario.seed() * 31 + 7);
        Map<String, ?> serviceConfig = ServiceConfigs.builder().build();
        @SuppressWarnings("unchecked")
        Map<String, ?> policy = ((List<Map<String, Map<String, ?>>>) serviceConfig.get("loadBalancingConfig"))
                .get(0)
                .values()
                .iterator()
                .next();
        this.network = new SimChannel(
                this,
                replicas,
                BalancerProbe.peakEwma("sim_peak_ewma", clock.nanoClock(), () -> picks, clock.scheduler()),
                policy,
                KEEPALIVE_DETECT_NANOS);
        this.cancellations = CancellationBudget.builder()
                .perSecond(SimReplica.RAPID_RESET_GUARD / 2.0)
                .burst(SimReplica.RAPID_RESET_GUARD / 4.0)
                .nanoClock(clock.nanoClock())
                .scheduler(clock.scheduler())
                .listener(outcome -> count("cancellation " + outcome))
                .build();
        cancellations.follow(network);
        this.tokens = TokenBucket.builder().build();
        this.retry = Retry.builder(rules)
                .limiter(RetryLimiter.allOf(
                        tokens,
                        RetryBudget.builder().nanoClock(clock.nanoClock()).build()))
                .hedging(Hedging.builder()
                        .percentile(95)
                        .delay(Duration.ofMillis(5), Duration.ofMillis(500))
                        .minSamples(50)
                        .build())
                .scheduler(clock.scheduler())
                .nanoClock(clock.nanoClock())
                .listener(new dev.grpcops.retry.RetryListener() {
                    @Override
                    public void outcome(String target, dev.grpcops.retry.RetryOutcome outcome) {
                        count("retry " + outcome);
                    }

                    @Override
                    public void hedge(String target, dev.grpcops.retry.HedgeOutcome outcome) {
                        count("hedge " + outcome);
                    }
                })
                .build();
        dev.grpcops.client.BalancingListener balancing = new dev.grpcops.client.BalancingListener() {
            @Override
            public void passedOver(PassedOver reason) {
                count("passed over: " + reason);
            }

            @Override
            public void probed() {
                count("probe");
            }

            @Override
            public void slowStartBegan() {
                count("slow start");
            }
        };
        BudgetInterceptors budget = BudgetInterceptors.builder(rules).build();
        // As ChannelStack orders them, innermost first (the last listed runs first).
        this.stack = ClientInterceptors.intercept(
                network,
                List.of(
                        balancing.interceptor(),
                        cancellations,
                        AdmissionInterceptors.callerForwarding(),
                        budget.client(),
                        Retry.clientInterceptor()));
        this.front = Admission.builder(AdmissionConfig.builder()
                        .limit(scenario.frontSeats())
                        .maxWait(Duration.ofMillis(500))
                        .build())
                .nanoClock(clock.nanoClock())
                .timer(clock.timer())
                .build();
        for (Scenario.Flow flow : scenario.flows()) {
            scheduleNext(flow);
        }
    }

    // The world's tools, for its parts.

    /** Runs {@code task} at {@code millis} into the run. */
    void at(long millis, Runnable task) {
        clock.scheduler().schedule(task, millis, TimeUnit.MILLISECONDS);
    }

    void count(String event) {
        events.merge(event, 1, Integer::sum);
    }

    void violation(String what) {
        violations.add(String.format(Locale.ROOT, "at %.3f s: %s", seconds(), what));
    }

    double seconds() {
        return (clock.nanoTime() - (endNanos - scenario.length().toNanos())) / 1e9;
    }

    boolean chance(double p) {
        return random.nextDouble() < p;
    }

    double uniform() {
        return random.nextDouble();
    }

    double exponential(double mean) {
        return -mean * Math.log(1 - random.nextDouble());
    }

    /** Runs the scenario, then lets everything settle; returns what broke (empty: nothing). */
    List<String> run() {
        while (clock.nanoTime() < endNanos && violations.isEmpty()) {
            clock.forwardMillis(1);
            check();
        }
        callersStopped = true;
        // Settle: no new calls; every deadline passes, every backlog drains.
        for (int i = 0; i < 60_000 && violations.isEmpty(); i++) {
            clock.forwardMillis(1);
            check();
        }
        if (violations.isEmpty()) {
            settled();
        }
        return List.copyOf(violations);
    }

    /** What held at every millisecond. */
    private void check() {
        String frontBroken = AdmissionProbe.invariantViolation(front);
        if (frontBroken != null) {
            violation("front admission: " + frontBroken);
        }
        for (SimReplica replica : replicas) {
            String broken = replica.violation();
            if (broken != null) {
                violation(replica.address + " admission: " + broken);
            }
        }
        if (cancellations.waiting() > 500) {
            violation(cancellations.waiting() + " deferred cancellations waiting, more than the 500 allowed");
        }
        double left = tokens.tokens("stock");
        if (left < 0 || left > 10) {
            violation("retry tokens out of bounds: " + left);
        }
        checkShares();
        checkFairness();
    }

    /**
     * Each flow within its fair bound over a window: among the flows of a level that had calls
     * waiting at every millisecond of the window, none got less than a quarter of an equal share of
     * the seats the level charged them (fair queuing by virtual time, charged per seat): the seats
     * their calls were dispatched to, and those of calls their callers withdrew from the queue,
     * which admission charges as served so that queueing and cancelling keeps no queue first.
     */
    private void checkFairness() {
        long now = clock.nanoTime();
        for (FlowWindow flow : fairness.values()) {
            if (flow.waiting == 0) {
                flow.backloggedAllWindow = false;
            }
        }
        if (now - windowStart < FAIRNESS_WINDOW_NANOS) {
            return;
        }
        Map<String, List<Map.Entry<String, FlowWindow>>> byLevel = new TreeMap<>();
        for (Map.Entry<String, FlowWindow> entry : fairness.entrySet()) {
            if (entry.getValue().backloggedAllWindow) {
                byLevel.computeIfAbsent(entry.getValue().level, l -> new ArrayList<>())
                        .add(entry);
            }
        }
        for (Map.Entry<String, List<Map.Entry<String, FlowWindow>>> level : byLevel.entrySet()) {
            List<Map.Entry<String, FlowWindow>> backlogged = level.getValue();
            long total = backlogged.stream().mapToLong(e -> e.getValue().seats).sum();
            if (backlogged.size() < 2 || total < 40) {
                continue;
            }
            count("fairness windows judged");
            double floor = FAIR_SHARE_FLOOR * total / backlogged.size();
            for (Map.Entry<String, FlowWindow> flow : backlogged) {
                if (flow.getValue().seats < floor) {
                    violation(String.format(
                            Locale.ROOT,
                            "flow %s, waiting all through the last %d ms, got %d of the %d seats level %s gave its %d"
                                    + " waiting flows (floor %.0f)",
                            flow.getKey(),
                            FAIRNESS_WINDOW_NANOS / 1_000_000,
                            flow.getValue().seats,
                            total,
                            level.getKey(),
                            backlogged.size(),
                            floor));
                }
            }
        }
        windowStart = now;
        for (FlowWindow flow : fairness.values()) {
            flow.seats = 0;
            flow.backloggedAllWindow = flow.waiting > 0;
        }
    }

    private FlowWindow window(FrontCall call) {
        return fairness.computeIfAbsent(call.flow.name(), f -> new FlowWindow(call.flow.criticality()));
    }

    /**
     * No replica that answers fine and that the balancer offers goes a whole window without a call
     * while the channel picks a lot: slow start, probes and the draws give every one its share.
     */
    private void checkShares() {
        long now = clock.nanoTime();
        for (SimReplica replica : replicas) {
            long[] watch = shareWatch.computeIfAbsent(replica, r -> new long[] {now, r.received, network.picks});
            boolean eligible = replica.healthy() && network.offers(replica);
            if (!eligible || replica.received != watch[1]) {
                watch[0] = now;
                watch[1] = replica.received;
                watch[2] = network.picks;
            } else if (now - watch[0] >= SHARE_WINDOW_NANOS && network.picks - watch[2] >= SHARE_MIN_PICKS) {
                violation(replica.address + " answers fine and is offered, yet got none of the last "
                        + (network.picks - watch[2]) + " picks in " + SHARE_WINDOW_NANOS / 1_000_000 + " ms");
                watch[0] = now;
                watch[2] = network.picks;
            }
        }
    }

    /** After the settling: every call ended once, every seat back, nothing left waiting. */
    private void settled() {
        for (FrontCall call : calls) {
            if (call.ends != 1) {
                violation(call + " ended " + call.ends + " times");
            }
        }
        if (front.levels().stream().anyMatch(l -> l.executingSeats() != 0 || l.inQueue() != 0)) {
            violation("front admission still holds seats or calls after settling");
        }
        for (SimReplica replica : replicas) {
            if (!replica.idle()) {
                violation(replica.address + " still holds seats or calls after settling");
            }
        }
        if (cancellations.waiting() != 0) {
            violation(cancellations.waiting() + " deferred cancellations never sent nor ended");
        }
        if (network.open() != 0) {
            violation(network.open() + " calls still open after settling");
        }
    }

    /** What happened, in a few lines: each flow's outcomes, each replica's streams, the picks. */
    String report() {
        StringBuilder report = new StringBuilder(scenario.toString()).append('\n');
        report.append("  calls: ")
                .append(calls.size())
                .append(", by flow: ")
                .append(outcomes)
                .append('\n');
        for (SimReplica replica : replicas) {
            report.append("  ")
                    .append(replica.address)
                    .append(": ")
                    .append(replica.received)
                    .append(" streams\n");
        }
        report.append("  picks: ").append(network.picks).append(", ").append(events);
        return report.toString();
    }

    /** Per flow, how its calls ended. */
    Map<String, Map<String, Integer>> outcomes() {
        return outcomes;
    }

    // The callers.

    private void scheduleNext(Scenario.Flow flow) {
        long gapNanos = (long) (exponential(1.0 / flow.perSecond()) * 1e9 * flow.burst());
        clock.scheduler()
                .schedule(
                        () -> {
                            if (callersStopped || clock.nanoTime() >= endNanos) {
                                return;
                            }
                            for (int i = 0; i < flow.burst(); i++) {
                                arrive(flow);
                            }
                            scheduleNext(flow);
                        },
                        gapNanos,
                        TimeUnit.NANOSECONDS);
    }

    private void arrive(Scenario.Flow flow) {
        long deadlineMillis = chance(flow.noDeadlineShare())
                ? -1
                : flow.minDeadlineMillis() + (long) (uniform() * (flow.maxDeadlineMillis() - flow.minDeadlineMillis()));
        FrontCall call = new FrontCall(flow, 1 + random.nextInt(flow.maxWidth()), deadlineMillis);
        calls.add(call);
        call.arrive();
        if (chance(flow.leaveShare())) {
            long leaveNanos = TimeUnit.MILLISECONDS.toNanos(1 + random.nextLong(flow.maxLeaveMillis()));
            clock.scheduler().schedule(() -> call.leave("left"), leaveNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void ended(FrontCall call, String outcome) {
        if (++call.ends > 1) {
            violation(call + " ended twice (" + outcome + ")");
            return;
        }
        outcomes.computeIfAbsent(call.flow.name(), f -> new TreeMap<>()).merge(outcome, 1, Integer::sum);
    }

    /** One call of a caller at the front hop: admitted, fanned out, answered (or left) exactly once. */
    final class FrontCall implements AdmissionRequest {

        final Scenario.Flow flow;
        final int width;
        private final long deadlineMillis;
        private final long arrivedNanos = clock.nanoTime();
        private final Context.CancellableContext caller;
        private Context served;
        private Ticket ticket;
        private long departedAt = Long.MAX_VALUE;
        private boolean started;
        private boolean queued;
        int ends;
        private int pending;
        private int available;

        FrontCall(Scenario.Flow flow, int width, long deadlineMillis) {
            this.flow = flow;
            this.width = width;
            this.deadlineMillis = deadlineMillis;
            this.caller = Context.ROOT.withCancellation();
        }

        boolean departed() {
            return clock.nanoTime() >= departedAt;
        }

        void arrive() {
            // The caller's deadline on the world's clock; one without gets the default, on it too.
            long budgetMillis = deadlineMillis < 0 ? rules.defaultBudget().toMillis() : deadlineMillis;
            Deadline deadline = Deadline.after(budgetMillis, TimeUnit.MILLISECONDS, clock.ticker());
            Budget budget = Budget.arrived(deadline, rules);
            Caller who = Caller.of(flow.name(), null, Criticality.parse(flow.criticality()));
            served = who.attachTo(budget.attachTo(caller)).withValue(FRONT, this);
            if (deadlineMillis >= 0) {
                clock.scheduler().schedule(() -> leave("deadline"), deadlineMillis, TimeUnit.MILLISECONDS);
            }
            long needed = rules.reserve().plus(rules.minDownstream()).toNanos();
            ticket = front.offer(
                    front.level(flow.criticality()), TimeUnit.MILLISECONDS.toNanos(budgetMillis) - needed, width, this);
            if (!started && ends == 0) {
                queued = true;
                window(this).waiting++;
            }
        }

        /** It no longer waits in admission's queue. */
        private void leftQueue() {
            if (queued) {
                queued = false;
                window(this).waiting--;
            }
        }

        /**
         * The caller leaves (cancels, or its deadline passes): its context is cancelled at once, as
         * grpc-java's server does when the RST_STREAM arrives, while admission hears of it a moment
         * later, with the call's other events: a seat may come in between, and the handler then runs
         * for a caller already gone.
         */
        void leave(String why) {
            if (departedAt != Long.MAX_VALUE || ends > 0) {
                return;
            }
            departedAt = clock.nanoTime();
            caller.cancel(null);
            clock.scheduler()
                    .schedule(
                            () -> {
                                boolean left = ticket != null
                                        && (why.equals("deadline") ? ticket.deadlinePassed() : ticket.cancel());
                                if (left) {
                                    if (!why.equals("deadline")) {
                                        // Admission charges its flow for it as for a call served: its
                                        // share includes what it withdrew.
                                        window(this).seats += width;
                                    }
                                    leftQueue();
                                    ended(this, "left while queued"); // never served
                                }
                            },
                            random.nextLong(TimeUnit.MILLISECONDS.toNanos(2)),
                            TimeUnit.NANOSECONDS);
        }

        @Override
        public String flowId() {
            return flow.name();
        }

        @Override
        public void start(Ticket seat) {
            this.ticket = seat;
            started = true;
            leftQueue();
            window(this).seats += width;
            // A handler does not ask whether its caller is still there: it fans out, and the library
            // must send nothing for one that has left (cancelled before its seat came).
            // The seat is held until the call and its downstream calls have ended.
            Context seated = ServedSeat.attach(served, clock.nanoClock(), () -> seat.release());
            pending = width;
            seated.run(() -> {
                for (int i = 0; i < width; i++) {
                    CheckRequest request =
                            CheckRequest.newBuilder().setSku("s" + i).build();
                    ListenableFuture<CheckReply> quote =
                            retry.hedged(() -> StockGrpc.newFutureStub(stack).check(request));
                    Futures.addCallback(
                            quote,
                            new FutureCallback<>() {
                                @Override
                                public void onSuccess(CheckReply reply) {
                                    available++;
                                    lineDone(seated);
                                }

                                @Override
                                public void onFailure(Throwable failure) {
                                    count("line "
                                            + Status.fromThrowable(failure).getCode());
                                    lineDone(seated);
                                }
                            },
                            MoreExecutors.directExecutor());
                }
            });
        }

        private void lineDone(Context seated) {
            if (--pending == 0) {
                ServedSeat.current(seated).ended();
                ended(this, departed() ? "left" : available == width ? "complete" : "partial");
            }
        }

        @Override
        public void reject(Rejection rejection) {
            leftQueue();
            ended(this, "rejected " + rejection.reason().label());
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "call of %s (width %d, %s) at %.3f s",
                    flow.name(),
                    width,
                    deadlineMillis < 0 ? "no deadline" : deadlineMillis + " ms",
                    (arrivedNanos - (endNanos - scenario.length().toNanos())) / 1e9);
        }
    }
}
