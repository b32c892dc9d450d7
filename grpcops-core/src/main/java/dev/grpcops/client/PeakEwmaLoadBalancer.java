package dev.grpcops.client;

import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.util.MultiChildLoadBalancer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The balancer behind {@link PeakEwmaLoadBalancerProvider} (and, picking in turn, behind
 * {@link RoundRobinLoadBalancerProvider}): one pick_first child per replica, and a picker over the
 * ready replicas that are not ejected. Peak-EWMA draws two of them at random and takes the one with
 * the lower cost = peak-EWMA latency × (outstanding + 1); with few replicas ({@code compareAllUpTo})
 * it also looks at every one, and passes over the one drawn while its latency is more than {@value
 * Picker#FULL_VIEW_VETO} times the fastest's, but for one probe a second. A call with a deadline in its
 * call options (a stub's {@code withDeadline}, or the budget interceptor's; a deadline only in the
 * caller's {@code Context} is not seen here) does not go to a replica whose latency cost is more
 * than what is left of it while one within it is in the choice (every replica, or the two drawn). Every call's latency and {@link CallOutcome}
 * feed its replica when the call ends, from the stream's tracer: the cost, and the counts that
 * {@link OutlierDetection} judges once an interval in the synchronization context.
 *
 * <p>The picks are {@link Picker}'s, over a snapshot of the replicas in the choice; the cost
 * arithmetic is {@link PeakEwma}'s, ejection {@link OutlierDetection}'s.
 */
final class PeakEwmaLoadBalancer extends MultiChildLoadBalancer {

    /** The parsed policy config; times in nanoseconds; {@code ejection} null for none. */
    record Config(
            long decayNanos,
            long failurePenaltyNanos,
            OutlierDetection ejection,
            int compareAllUpTo,
            long slowStartNanos) {

        /**
         * Decay 10 s (Linkerd's and Finagle's: a slow answer mostly forgotten after a few tens of
         * seconds); a fast failure costs as much as a second-long answer; up to 8 replicas every one
         * compared (a few loads more per pick, and with two of three slow a slow one gets only its
         * probe and the hedges); slow start over 10 s (a JIT-cold JVM's first seconds); no ejection.
         */
        static final Config DEFAULTS = new Config(
                Duration.ofSeconds(10).toNanos(),
                Duration.ofSeconds(1).toNanos(),
                null,
                8,
                Duration.ofSeconds(10).toNanos());

        Duration decay() {
            return Duration.ofNanos(decayNanos);
        }

        Duration failurePenalty() {
            return Duration.ofNanos(failurePenaltyNanos);
        }

        Duration slowStart() {
            return Duration.ofNanos(slowStartNanos);
        }
    }

    /** What a replica that has just become ready weighs at first against its peers in slow start (Envoy's 10 %). */
    static final double SLOW_START_MIN_WEIGHT = 0.1;

    /**
     * Away at least this long, a replica back is in slow start (a restart or a health flap takes
     * seconds); a reconnect after GOAWAY (max connection age) takes milliseconds, and is not.
     */
    static final long SLOW_START_AWAY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * A replica passed over for its latency still gets a call this often when it has none
     * outstanding: its probe, so that one whose first answers were slow (a cold JVM, a first
     * connection) is heard from again and its latency can fall, while one that stays slow costs
     * one call a second, which hedging covers. One whose last call failed gets it too (a replica
     * that shed a call in a moment's overload would otherwise sit at the failure penalty until it
     * decayed, about 40 s to its peers' few milliseconds, with every call on its peers), but not
     * after a probe that failed: a replica that keeps failing costs one failed call more, and is
     * ejection's and the decay's to deal with.
     */
    static final long PROBE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Where a call carries its channel's {@link BalancingListener} ({@link BalancingListener#interceptor()}). */
    static final io.grpc.CallOptions.Key<BalancingListener> LISTENER =
            io.grpc.CallOptions.Key.createWithDefault("grpcops-balancing-listener", BalancingListener.NONE);

    /** A replica that has answered every call sent to it before its last answer. */
    static final long NOT_WAITING = Long.MIN_VALUE;

    /** A replica's cost before it has answered, when no other replica has either. */
    static final long INITIAL_COST_NANOS = 5_000_000L;

    private final LongSupplier nanoClock;
    private final Supplier<RandomGenerator> random;
    private final boolean roundRobin;
    /** Where the ejection timer runs; the channel's own timer unless a test gives one. */
    private final ScheduledExecutorService timer;

    private final AtomicInteger nextInTurn = new AtomicInteger();
    /** Ejections and returns not yet reported to a call's listener; shared by every picker of this balancer. */
    private final Picker.Ejections ejections = new Picker.Ejections();

    private volatile Config config = Config.DEFAULTS;
    private SubchannelPicker currentPicker;
    /** The rules the pickers were last made with (the synchronization context only). */
    private Picker.Rules rules;

    private SynchronizationContext.ScheduledHandle judging;
    /** Replicas in TRANSIENT_FAILURE at the last count, as told to {@link ReplicasDown}. */
    private int down;

    PeakEwmaLoadBalancer(
            Helper helper,
            LongSupplier nanoClock,
            Supplier<RandomGenerator> random,
            boolean roundRobin,
            ScheduledExecutorService timer) {
        super(helper);
        this.nanoClock = nanoClock;
        this.random = random;
        this.roundRobin = roundRobin;
        this.timer = timer != null ? timer : helper.getScheduledExecutorService();
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses resolvedAddresses) {
        Object parsed = resolvedAddresses.getLoadBalancingPolicyConfig();
        if (parsed instanceof Config given) {
            config = given;
        }
        Status status = super.acceptResolvedAddresses(resolvedAddresses);
        scheduleJudging();
        return status;
    }

    /** Outlier detection judges the replicas once an interval, while it is configured. */
    private void scheduleJudging() {
        OutlierDetection ejection = config.ejection();
        if (ejection == null) {
            if (judging != null) {
                judging.cancel();
                judging = null;
            }
            int out = 0;
            for (ChildLbState child : getChildLbStates()) {
                Replica replica = (Replica) child;
                out += replica.ejection.ejected() ? 1 : 0;
                replica.ejection = new Ejection();
            }
            ejections.add(0, out);
            if (out > 0) {
                updateOverallBalancingState(); // those ejected are back in the pick now, not at the next change
            }
            return;
        }
        if (judging == null || !judging.isPending()) {
            judging = getHelper()
                    .getSynchronizationContext()
                    .schedule(this::judge, ejection.interval().toNanos(), TimeUnit.NANOSECONDS, timer);
        }
    }

    private void judge() {
        judging = null;
        OutlierDetection ejection = config.ejection();
        if (ejection == null) {
            return;
        }
        java.util.Collection<ChildLbState> children = getChildLbStates();
        List<Ejection> replicas = new ArrayList<>(children.size());
        boolean[] outBefore = new boolean[children.size()];
        for (ChildLbState child : children) {
            Ejection replica = ((Replica) child).ejection;
            outBefore[replicas.size()] = replica.ejected();
            replicas.add(replica);
        }
        if (!replicas.isEmpty() && Ejection.judge(ejection, replicas, nanoClock.getAsLong())) {
            reportEjections(replicas, outBefore);
            updateOverallBalancingState();
        }
        scheduleJudging();
    }

    /** What one judgement changed (a replica is never ejected and back in one), for the listener of the next call. */
    private void reportEjections(List<Ejection> replicas, boolean[] outBefore) {
        int ejected = 0;
        int returned = 0;
        for (int i = 0; i < outBefore.length; i++) {
            boolean out = replicas.get(i).ejected();
            ejected += out && !outBefore[i] ? 1 : 0;
            returned += !out && outBefore[i] ? 1 : 0;
        }
        ejections.add(ejected, returned);
    }

    @Override
    public void shutdown() {
        if (judging != null) {
            judging.cancel();
            judging = null;
        }
        ReplicasDown.report(authority(), this, 0);
        super.shutdown();
    }

    private String authority() {
        try {
            return getHelper().getAuthority();
        } catch (UnsupportedOperationException e) {
            return null;
        }
    }

    /** Counts the replicas that cannot be reached, for the reconnect nudging of their channel. */
    private void countDown() {
        int now = 0;
        for (ChildLbState child : getChildLbStates()) {
            if (child.getCurrentState() == ConnectivityState.TRANSIENT_FAILURE) {
                now++;
            }
        }
        if (now != down) {
            down = now;
            ReplicasDown.report(authority(), this, now);
        }
    }

    @Override
    protected ChildLbState createChildLbState(Object key) {
        return new Replica(key);
    }

    /**
     * What a replica's latency starts at when it becomes ready: the mean cost of the others that
     * are ready and not ejected, so that it is neither flooded nor shunned (one that is failing
     * would drag the mean up and shun it for minutes).
     */
    private double initialCost(Replica joining) {
        long now = nanoClock.getAsLong();
        double sum = 0;
        int count = 0;
        for (ChildLbState child : getChildLbStates()) {
            Replica replica = (Replica) child;
            if (replica != joining
                    && replica.getCurrentState() == ConnectivityState.READY
                    && !replica.ejection.ejected()
                    && replica.everReady) {
                sum += replica.cost(now);
                count++;
            }
        }
        return count == 0 ? INITIAL_COST_NANOS : Math.max(1, sum / count);
    }

    /** Whether a replica other than {@code joining} has been serving for a while: the ones it joins. */
    private boolean othersEstablished(Replica joining, long now) {
        for (ChildLbState child : getChildLbStates()) {
            Replica replica = (Replica) child;
            if (replica != joining
                    && replica.getCurrentState() == ConnectivityState.READY
                    && now - replica.firstReady >= SLOW_START_AWAY_NANOS) {
                return true;
            }
        }
        return false;
    }

    @Override
    protected void updateOverallBalancingState() {
        countDown();
        List<ChildLbState> ready = getReadyChildren();
        if (!ready.isEmpty()) {
            List<ChildLbState> inPick = new ArrayList<>(ready.size());
            for (ChildLbState child : ready) {
                if (!((Replica) child).ejection.ejected()) {
                    inPick.add(child);
                }
            }
            // Ejection leaves at least one replica in: should it not, the ejected still beat no answer.
            List<Replica> replicas = new ArrayList<>(inPick.size());
            for (ChildLbState child : inPick.isEmpty() ? ready : inPick) {
                replicas.add((Replica) child);
            }
            update(ConnectivityState.READY, new Picker(replicas, pickRules()));
            return;
        }
        List<ChildLbState> failing = new ArrayList<>();
        for (ChildLbState child : getChildLbStates()) {
            ConnectivityState state = child.getCurrentState();
            if (state == ConnectivityState.CONNECTING || state == ConnectivityState.IDLE) {
                update(ConnectivityState.CONNECTING, new FixedResultPicker(PickResult.withNoResult()));
                return;
            }
            if (state == ConnectivityState.TRANSIENT_FAILURE) {
                failing.add(child);
            }
        }
        // Every replica failing: a failing child's picker, so that calls fail with its reason.
        update(
                ConnectivityState.TRANSIENT_FAILURE,
                failing.isEmpty()
                        ? new FixedResultPicker(PickResult.withError(Status.UNAVAILABLE.withDescription("no replica")))
                        : failing.get(random.get().nextInt(failing.size())).getCurrentPicker());
    }

    /** The rules of this balancer's picks under its current config: the same object while that holds. */
    private Picker.Rules pickRules() {
        Picker.Rules rules = this.rules;
        if (rules == null || rules.compareAllUpTo() != config.compareAllUpTo()) {
            rules = new Picker.Rules(roundRobin, config.compareAllUpTo(), nanoClock, random, nextInTurn, ejections);
            this.rules = rules;
        }
        return rules;
    }

    private void update(ConnectivityState state, SubchannelPicker picker) {
        if (state != currentConnectivityState || !picker.equals(currentPicker)) {
            getHelper().updateBalancingState(state, picker);
            currentConnectivityState = state;
            currentPicker = picker;
        }
    }

    /** One replica: its pick_first child, its calls outstanding, its peak-EWMA latency, its standing with ejection. */
    final class Replica extends ChildLbState implements Picker.Candidate {

        private final AtomicInteger outstanding = new AtomicInteger();
        /**
         * A probe went out and has not answered: its answer, the next one heard (nothing else was
         * outstanding), re-measures the replica instead of being averaged in, so that a replica
         * whose first answers were slow comes back at its first fast one.
         */
        private volatile boolean probeAnswerPending;
        /** Its last probe failed (a replica failure, or shedding): no more probes until it answers well. */
        private volatile boolean probeFailed;
        /** When it last got a probe (see {@link #PROBE_INTERVAL_NANOS}). */
        private final java.util.concurrent.atomic.AtomicLong lastProbe =
                new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);

        private final ClientStreamTracer.Factory tracers = new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                return new CallTracer(Replica.this, nanoClock.getAsLong());
            }
        };
        private final PeakEwma latency;
        /** Replaced, not reset, when outlier detection is switched off: read from the picker's threads. */
        volatile Ejection ejection = new Ejection();
        /** Whether it has been READY since it was made (the synchronization context only). */
        private boolean everReady;
        /** When its slow start began; {@link Long#MIN_VALUE}: none (read from the picker's threads). */
        private volatile long slowStartSince = Long.MIN_VALUE;
        /** Set when a slow start begins, cleared by the pick that reports it ({@link BalancingListener}). */
        private final java.util.concurrent.atomic.AtomicBoolean slowStartUnreported =
                new java.util.concurrent.atomic.AtomicBoolean();
        /**
         * When the first call sent to it since its last answer was sent; {@link #NOT_WAITING} once it
         * has answered every call sent before (an answer of any kind: the replica was heard from).
         */
        private final java.util.concurrent.atomic.AtomicLong unansweredSince =
                new java.util.concurrent.atomic.AtomicLong(NOT_WAITING);

        /** When it first became READY, and when it last left READY (the synchronization context only). */
        private long firstReady;

        private long leftReady;

        Replica(Object key) {
            super(key, pickFirstLbProvider);
            this.latency = new PeakEwma(INITIAL_COST_NANOS, nanoClock.getAsLong());
        }

        @Override
        protected ChildLbStateHelper createChildHelper() {
            return new ChildLbStateHelper() {
                @Override
                public void updateBalancingState(ConnectivityState newState, SubchannelPicker newPicker) {
                    long now = nanoClock.getAsLong();
                    if (newState == ConnectivityState.READY && getCurrentState() != ConnectivityState.READY) {
                        boolean away = !everReady || now - leftReady >= SLOW_START_AWAY_NANOS;
                        if (away) {
                            // Its cost starts again, at its peers': a replica back from a restart or a
                            // health flap is not credited with the time it was away (decayed to nothing,
                            // it would win every pick while cold), nor blamed for what it was before. A
                            // reconnect (a GOAWAY at the maximum connection age) keeps what it earned.
                            latency.reset(initialCost(Replica.this), now);
                            unansweredSince.set(NOT_WAITING);
                        }
                        slowStartSince = away && othersEstablished(Replica.this, now) ? now : Long.MIN_VALUE;
                        // Reported only where it slows anything: round robin and a zero window ignore it.
                        slowStartUnreported.set(
                                slowStartSince != Long.MIN_VALUE && !roundRobin && config.slowStartNanos() > 0);
                        if (!everReady) {
                            firstReady = now;
                        }
                        everReady = true;
                    } else if (newState != ConnectivityState.READY && getCurrentState() == ConnectivityState.READY) {
                        leftReady = now;
                    }
                    super.updateBalancingState(newState, newPicker);
                    // As round_robin: a replica whose connection went idle reconnects at once.
                    if (!resolvingAddresses && newState == ConnectivityState.IDLE) {
                        getLb().requestConnection();
                    }
                }
            };
        }

        /**
         * The latency cost now: it decays towards zero while the replica is not heard from, but is
         * never less than how long it has left a call unanswered since its last answer (a replica
         * whose node went silent answers nothing, and must not look faster for it; calls its callers
         * gave up on, hedges that lost, tell nothing of it).
         */
        @Override
        public double cost(long now) {
            double decayed = measuredCost(now);
            long since = unansweredSince.get();
            return since == NOT_WAITING ? decayed : Math.max(decayed, now - since);
        }

        @Override
        public double measuredCost(long now) {
            return latency.cost(now, config.decayNanos());
        }

        /**
         * What a pick weighs: latency cost × (calls outstanding + 1). A replica in its slow start
         * takes no part in the comparison: it gets its share of the picks from {@link
         * Picker#slowStartPick} instead.
         */
        @Override
        public double load(long now) {
            if (inSlowStart(now)) {
                return Double.POSITIVE_INFINITY;
            }
            return cost(now) * (outstanding.get() + 1);
        }

        /**
         * Whether it is in its slow start now. Slow start is for a replica that joins replicas already
         * serving (new, or back after a second or more away), not for those a channel starts with,
         * nor for a reconnect; round robin has none.
         */
        @Override
        public boolean inSlowStart(long now) {
            long since = slowStartSince;
            long window = config.slowStartNanos();
            return since != Long.MIN_VALUE && !roundRobin && window > 0 && now - since < window;
        }

        /**
         * Its weight in its slow start: from {@value #SLOW_START_MIN_WEIGHT} when it became ready up
         * to 1 at the end of the window, so that a JIT-cold replica's share of the calls ramps up and
         * is never zero (Envoy's {@code min_weight_percent}).
         */
        @Override
        public double slowStartWeight(long now) {
            return Math.max(
                    SLOW_START_MIN_WEIGHT, Math.max(0, now - slowStartSince) / (double) config.slowStartNanos());
        }

        /** When its slow start ends; {@link Long#MIN_VALUE} when it has none. */
        @Override
        public long slowStartEnds() {
            long since = slowStartSince;
            return since == Long.MIN_VALUE || roundRobin || config.slowStartNanos() <= 0
                    ? Long.MIN_VALUE
                    : since + config.slowStartNanos();
        }

        /** Whether a call may go to it as its probe now; claims the probe if so. */
        @Override
        public boolean claimProbe(long now) {
            long last = lastProbe.get();
            if (probeDue(now, last) && lastProbe.compareAndSet(last, now)) {
                probeAnswerPending = true;
                return true;
            }
            return false;
        }

        /** Whether a probe would be due now: cheap reads only, checked on every pick before any cost. */
        @Override
        public boolean probeDue(long now) {
            return probeDue(now, lastProbe.get());
        }

        private boolean probeDue(long now, long last) {
            return outstanding.get() == 0
                    && !probeFailed
                    && (last == Long.MIN_VALUE || now - last >= PROBE_INTERVAL_NANOS);
        }

        int outstanding() {
            return outstanding.get();
        }

        @Override
        public Object key() {
            return getKey();
        }

        @Override
        public SubchannelPicker picker() {
            return getCurrentPicker();
        }

        @Override
        public ClientStreamTracer.Factory tracers() {
            return tracers;
        }

        @Override
        public boolean slowStartUnreported() {
            return slowStartUnreported.get();
        }

        @Override
        public boolean claimSlowStartReport() {
            return slowStartUnreported.compareAndSet(true, false);
        }

        /**
         * A call ended after {@code rttNanos} as {@code outcome}. A fast failure (the replica's, or
         * shedding) counts as the penalty; a call cut short or whose failure was relayed from further
         * down only ever raises the cost, since its true latency was longer than what was seen.
         */
        void observe(long rttNanos, CallOutcome outcome, long now) {
            Config current = config;
            boolean probeAnswer = probeAnswerPending;
            switch (outcome) {
                case REPLICA_FAILURE, OVERLOAD ->
                    latency.observe(
                            now, Math.max(rttNanos, current.failurePenaltyNanos()), false, current.decayNanos());
                case CANCELLED, DEADLINE, RELAYED -> latency.observe(now, rttNanos, true, current.decayNanos());
                default -> {
                    if (probeAnswerPending) {
                        latency.reset(rttNanos, now);
                    } else {
                        latency.observe(now, rttNanos, false, current.decayNanos());
                    }
                }
            }
            probeAnswerPending = false;
            if (outcome != CallOutcome.CANCELLED && outcome != CallOutcome.DEADLINE) {
                unansweredSince.set(NOT_WAITING); // heard from; calls sent since count afresh
            }
            if (outcome == CallOutcome.REPLICA_FAILURE || outcome == CallOutcome.OVERLOAD) {
                probeFailed |= probeAnswer;
            } else if (outcome != CallOutcome.CANCELLED && outcome != CallOutcome.DEADLINE) {
                probeFailed = false;
            }
            ejection.record(outcome);
        }

        void started(long now) {
            outstanding.incrementAndGet();
            if (unansweredSince.get() == NOT_WAITING) {
                unansweredSince.compareAndSet(NOT_WAITING, now);
            }
        }

        void ended(long rttNanos, CallOutcome outcome, long now) {
            outstanding.decrementAndGet();
            observe(rttNanos, outcome, now);
        }
    }

    /** Follows one call on one replica. */
    private final class CallTracer extends ClientStreamTracer {

        private final Replica replica;
        private final long startNanos;
        private volatile Metadata trailers;

        CallTracer(Replica replica, long startNanos) {
            this.replica = replica;
            this.startNanos = startNanos;
            replica.started(startNanos);
        }

        @Override
        public void inboundTrailers(Metadata trailers) {
            this.trailers = trailers;
        }

        @Override
        public void streamClosed(Status status) {
            long now = nanoClock.getAsLong();
            replica.ended(now - startNanos, CallOutcome.of(status, trailers), now);
        }
    }
}
