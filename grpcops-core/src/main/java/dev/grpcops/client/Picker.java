package dev.grpcops.client;

import dev.grpcops.internal.PickHint;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.ClientStreamTracer;
import io.grpc.Deadline;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.util.ForwardingClientStreamTracer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The picker of {@link PeakEwmaLoadBalancer} over a snapshot of its replicas (the ready ones that
 * are not ejected, as the balancer last counted them): two drawn at random and the cheaper one
 * taken, or every one compared when there are few, or one after another in turn. The replicas'
 * costs are live (each call's end moves them); which replicas are in the choice is not, a new
 * picker replaces this one when that changes. It reads each replica through {@link Candidate}, so
 * that its rules can be tested over candidates whose costs a test sets.
 */
final class Picker extends SubchannelPicker {

    /**
     * How much slower (peak-EWMA latency) than the fastest replica in the pick the one the draws
     * pick may be before a fast one is taken instead (while every replica is compared): twice, so
     * that replicas of about the same latency share the calls by the two draws alone, and one
     * clearly faster is never passed over for a slow one.
     */
    static final double FULL_VIEW_VETO = 2.0;

    /**
     * And at least this much slower: between replicas that answer in a millisecond or two, twice is
     * noise (a collection pause, a scheduling hiccup), and passing one over for it would leave its
     * share to the others until its cost decays.
     */
    static final long FULL_VIEW_MIN_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** A call without a deadline: no replica is too slow for it. */
    static final long NO_BUDGET = Long.MAX_VALUE;

    /** One replica as the picker sees it: its costs now, its slow start, its probe. */
    interface Candidate {

        /** The key its balancer knows it by (its address group). */
        Object key();

        /** Its own child picker (pick_first's over its connection). */
        SubchannelPicker picker();

        /** The tracer each call sent to it gets, for its cost and its outcomes. */
        ClientStreamTracer.Factory tracers();

        /** Its latency cost now, nanoseconds. */
        double cost(long now);

        /**
         * Its latency cost as its answers measured it, without what it has left unanswered since:
         * what a probe is judged by against a call's deadline. The probe is what tests a replica
         * suspected for its silence; judged by the time it has been silent, a replica silent for
         * longer than any call's deadline would never get one again.
         */
        double measuredCost(long now);

        /** What a pick weighs: latency cost × (calls outstanding + 1); infinite in its slow start. */
        double load(long now);

        /** Whether it is in its slow start now. */
        boolean inSlowStart(long now);

        /** Its weight in its slow start, up to 1. */
        double slowStartWeight(long now);

        /** When its slow start ends; {@link Long#MIN_VALUE} when it has none. */
        long slowStartEnds();

        /** Whether a probe would be due now: cheap reads only. */
        boolean probeDue(long now);

        /** Whether a call may go to it as its probe now; claims the probe if so. */
        boolean claimProbe(long now);

        /** Whether its slow start began and no pick has reported it yet. */
        boolean slowStartUnreported();

        /** Takes the report of its slow start: true once, for the pick that reports it. */
        boolean claimSlowStartReport();
    }

    /** How the picks of one balancer are made; shared by its pickers, one after another. */
    record Rules(
            boolean roundRobin,
            int compareAllUpTo,
            LongSupplier nanoClock,
            Supplier<RandomGenerator> random,
            AtomicInteger nextInTurn,
            Ejections ejections) {

        Rules {
            Objects.requireNonNull(nanoClock, "nanoClock");
            Objects.requireNonNull(random, "random");
            Objects.requireNonNull(nextInTurn, "nextInTurn");
            Objects.requireNonNull(ejections, "ejections");
        }

        Rules(
                boolean roundRobin,
                int compareAllUpTo,
                LongSupplier nanoClock,
                Supplier<RandomGenerator> random,
                AtomicInteger nextInTurn) {
            this(roundRobin, compareAllUpTo, nanoClock, random, nextInTurn, new Ejections());
        }
    }

    /**
     * Replicas the balancer's outlier detection took out of the pick or let back, not yet reported:
     * judged on the balancer's timer, reported to the listener of the next call picked (as slow
     * starts are), since the listener rides on the calls.
     */
    static final class Ejections {

        private final AtomicInteger out = new AtomicInteger();
        private final AtomicInteger back = new AtomicInteger();
        /** Whether either count is above zero: one volatile read per pick when nothing happened. */
        private volatile boolean pending;

        void add(int ejected, int returned) {
            if (ejected > 0 || returned > 0) {
                out.addAndGet(ejected);
                back.addAndGet(returned);
                pending = true;
            }
        }

        boolean pending() {
            return pending;
        }

        void reportTo(BalancingListener listener) {
            pending = false;
            for (int i = out.getAndSet(0); i > 0; i--) {
                listener.ejected();
            }
            for (int i = back.getAndSet(0); i > 0; i--) {
                listener.returned();
            }
        }
    }

    private final Candidate[] ready;
    private final SubchannelPicker[] pickers;
    private final Rules rules;
    /** When the last slow start of a replica in this pick ends: until then picks look for one. */
    private final long slowStartsEnd;
    /** Replicas whose slow start no pick has reported yet; null when none (most pickers). */
    private volatile List<Candidate> slowStartsToReport;

    Picker(List<? extends Candidate> candidates, Rules rules) {
        this.ready = candidates.toArray(Candidate[]::new);
        this.rules = rules;
        this.pickers = new SubchannelPicker[ready.length];
        List<Candidate> toReport = null;
        long lastEnd = Long.MIN_VALUE;
        for (int i = 0; i < ready.length; i++) {
            lastEnd = Math.max(lastEnd, ready[i].slowStartEnds());
            pickers[i] = ready[i].picker();
            if (ready[i].slowStartUnreported()) {
                toReport = toReport == null ? new ArrayList<>(1) : toReport;
                toReport.add(ready[i]);
            }
        }
        this.slowStartsToReport = toReport;
        this.slowStartsEnd = lastEnd;
    }

    /** Each slow start once, to the listener of the first call picked after it began. */
    private void reportSlowStarts(BalancingListener listener) {
        List<Candidate> toReport = slowStartsToReport;
        slowStartsToReport = null;
        if (toReport != null) {
            for (Candidate replica : toReport) {
                if (replica.claimSlowStartReport()) {
                    listener.slowStartBegan();
                }
            }
        }
    }

    /** Whether the replica keyed {@code key} is in this picker's choice (for tests that wait for it). */
    boolean offers(Predicate<Object> key) {
        for (Candidate replica : ready) {
            if (key.test(replica.key())) {
                return true;
            }
        }
        return false;
    }

    @Override
    public PickResult pickSubchannel(PickSubchannelArgs args) {
        PickHint hint = args.getCallOptions().getOption(PickHint.KEY);
        Object avoid = hint == null ? null : hint.avoid();
        Deadline deadline = args.getCallOptions().getDeadline();
        BalancingListener listener = args.getCallOptions().getOption(PeakEwmaLoadBalancer.LISTENER);
        if (slowStartsToReport != null && listener != BalancingListener.NONE) {
            reportSlowStarts(listener);
        }
        if (rules.ejections().pending() && listener != BalancingListener.NONE) {
            rules.ejections().reportTo(listener);
        }
        int chosen = choose(
                excluded(avoid), deadline == null ? NO_BUDGET : deadline.timeRemaining(TimeUnit.NANOSECONDS), listener);
        Candidate replica = ready[chosen];
        PickResult result = pickers[chosen].pickSubchannel(args);
        if (result.getSubchannel() == null) {
            return result;
        }
        if (hint != null) {
            hint.picked(replica.key());
        }
        if (args.getCallOptions().getOption(WarmUpMark.OPTION)) {
            return result; // the process's own warm-up: no latency, no failure learned from it
        }
        ClientStreamTracer.Factory inner = result.getStreamTracerFactory();
        return result.copyWithStreamTracerFactory(
                inner == null ? replica.tracers() : chained(replica.tracers(), inner));
    }

    /** The index of the replica to keep away from, or -1. */
    private int excluded(Object avoid) {
        if (avoid != null && ready.length > 1) {
            for (int i = 0; i < ready.length; i++) {
                if (ready[i].key().equals(avoid)) {
                    return i;
                }
            }
        }
        return -1;
    }

    /**
     * The index of the replica a call goes to. {@code excluded}: the one to keep away from, or -1;
     * {@code budgetNanos}: what is left of the call's deadline, {@link #NO_BUDGET} for none.
     */
    int choose(int excluded, long budgetNanos, BalancingListener listener) {
        int n = ready.length;
        if (n == 1) {
            return 0;
        }
        int candidates = excluded >= 0 ? n - 1 : n;
        if (rules.roundRobin()) {
            int next = Math.floorMod(rules.nextInTurn().getAndIncrement(), candidates);
            return excluded >= 0 && next >= excluded ? next + 1 : next;
        }
        if (candidates == 1) {
            return excluded == 0 ? 1 : 0;
        }
        RandomGenerator draw = rules.random().get();
        long now = rules.nanoClock().getAsLong();
        if (now - slowStartsEnd < 0) {
            int slowStarting = slowStartPick(excluded, candidates, now, budgetNanos, draw);
            if (slowStarting >= 0) {
                return slowStarting;
            }
        }
        int a = draw.nextInt(candidates);
        int b = draw.nextInt(candidates - 1);
        if (b >= a) {
            b++;
        }
        if (excluded >= 0) {
            a = a >= excluded ? a + 1 : a;
            b = b >= excluded ? b + 1 : b;
        }
        double loadA = ready[a].load(now);
        double loadB = ready[b].load(now);
        int winner = loadA < loadB || loadA == loadB && draw.nextBoolean() ? a : b;
        if (candidates > 2 && candidates <= rules.compareAllUpTo()) {
            // Two of three replicas slow: both drawn are slow a third of the time, and a slow
            // one drawn beside a busy fast one wins on load once its latency has decayed a
            // little. With few replicas every one is looked at, and the one drawn is judged by
            // latency (calls outstanding are what the two draws balance already), but for its
            // probe.
            double limit = passOverLimit(lowestCost(excluded, now));
            int probed = dueProbe(excluded, now, limit, budgetNanos);
            if (probed >= 0) {
                listener.probed();
                return probed;
            }
            BalancingListener.PassedOver passedOver = null;
            if (ready[winner].cost(now) > limit) {
                winner = fastest(excluded, now, limit, draw);
                passedOver = BalancingListener.PassedOver.LATENCY;
            }
            if (budgetNanos != NO_BUDGET && ready[winner].cost(now) > budgetNanos) {
                // Expected to answer after the call's deadline: one expected within it instead.
                int within = fastestWithin(excluded, now, budgetNanos, draw);
                if (within >= 0) {
                    winner = within;
                    passedOver = BalancingListener.PassedOver.DEADLINE;
                }
            }
            if (passedOver != null) {
                listener.passedOver(passedOver); // once a pick, for what decided it last
            }
            return winner;
        }
        int other = winner == a ? b : a;
        // Of two replicas only: a retry or hedge that avoids a third is no probe (it must be fast).
        if (n == 2 && excluded < 0 && probeOfTwo(other, winner, now, budgetNanos)) {
            listener.probed();
            return other;
        }
        if (budgetNanos != NO_BUDGET && ready[winner].cost(now) > budgetNanos) {
            if (ready[other].cost(now) <= budgetNanos) {
                listener.passedOver(BalancingListener.PassedOver.DEADLINE);
                return other;
            }
        }
        return winner;
    }

    /**
     * A replica in its slow start, for this pick; -1 if none. It gets its first call at once and
     * then one a second while it has none outstanding (its probe), and besides a share of the
     * picks: its weight times an equal share ({@code weight / candidates}). It takes no part in
     * the comparisons of the other picks, so that share is what it gets: never zero, whatever its
     * peers' load, and never more while it is cold. One whose cost is beyond the call's budget is
     * left out.
     */
    private int slowStartPick(int excluded, int candidates, long now, long budgetNanos, RandomGenerator draw) {
        for (int i = 0; i < ready.length; i++) {
            Candidate replica = ready[i];
            if (i == excluded || !replica.inSlowStart(now)) {
                continue;
            }
            if (replica.measuredCost(now) <= budgetNanos && replica.claimProbe(now)) {
                return i;
            }
            if (replica.cost(now) <= budgetNanos && draw.nextDouble() * candidates < replica.slowStartWeight(now)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Of two replicas, whether the one the draws left ({@code loser}) gets this pick as its probe,
     * claimed: the draws compare the same two every time, so one whose latency was once high (as
     * the full view judges it) would get no call until its cost had decayed below the other's load,
     * tens of seconds after a spike of a second, whatever it answers now. The probe's cheap checks
     * come first: most picks find none due and compute no cost.
     */
    private boolean probeOfTwo(int loser, int winner, long now, long budgetNanos) {
        if (!ready[loser].probeDue(now)) {
            return false;
        }
        double cost = ready[loser].cost(now);
        return claimsProbe(loser, cost, passOverLimit(Math.min(cost, ready[winner].cost(now))), now, budgetNanos);
    }

    /** The latency cost above which a replica is passed over, given the fastest one's. */
    private static double passOverLimit(double fastest) {
        return Math.max(FULL_VIEW_VETO * fastest, fastest + FULL_VIEW_MIN_GAP_NANOS);
    }

    /**
     * Whether replica {@code i}, whose probe is due and whose latency {@code cost} is past {@code
     * limit}, gets this call as its probe, claimed. A call that its measured latency says would end
     * past its deadline is no probe: a later one is.
     */
    private boolean claimsProbe(int i, double cost, double limit, long now, long budgetNanos) {
        return cost > limit && ready[i].measuredCost(now) <= budgetNanos && ready[i].claimProbe(now);
    }

    /**
     * A replica passed over for its latency ({@code limit}) whose probe is due, claimed; -1 if
     * none: each gets its probe whatever the draws, also one that never wins them.
     */
    private int dueProbe(int excluded, long now, double limit, long budgetNanos) {
        for (int i = 0; i < ready.length; i++) {
            // The cheap checks first: most picks find no probe due, and need no cost computed again.
            if (i != excluded
                    && ready[i].probeDue(now)
                    && claimsProbe(i, ready[i].cost(now), limit, now, budgetNanos)) {
                return i;
            }
        }
        return -1;
    }

    /** The lowest latency cost of the replicas, {@code excluded} left out (no draw: most picks need no more). */
    private double lowestCost(int excluded, long now) {
        double lowest = Double.MAX_VALUE;
        for (int i = 0; i < ready.length; i++) {
            if (i != excluded) {
                lowest = Math.min(lowest, ready[i].cost(now));
            }
        }
        return lowest;
    }

    /**
     * The index of the replica with the lowest load among those whose latency cost is within
     * {@code limit}, {@code excluded} left out; ties drawn at random.
     */
    private int fastest(int excluded, long now, double limit, RandomGenerator draw) {
        int chosen = fastestWithin(excluded, now, limit, draw);
        return chosen >= 0 ? chosen : (excluded == 0 ? 1 : 0);
    }

    /** As {@link #fastest}, but -1 when no replica's latency cost is within {@code limit}. */
    private int fastestWithin(int excluded, long now, double limit, RandomGenerator draw) {
        int chosen = -1;
        double lowest = Double.MAX_VALUE;
        int ties = 0;
        for (int i = 0; i < ready.length; i++) {
            if (i == excluded || ready[i].cost(now) > limit) {
                continue;
            }
            double load = ready[i].load(now);
            if (chosen < 0 || load < lowest) {
                lowest = load;
                chosen = i;
                ties = 1;
            } else if (load == lowest && draw.nextInt(++ties) == 0) {
                chosen = i;
            }
        }
        return chosen;
    }

    private static ClientStreamTracer.Factory chained(
            ClientStreamTracer.Factory ours, ClientStreamTracer.Factory inner) {
        return new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                ClientStreamTracer first = ours.newClientStreamTracer(info, headers);
                ClientStreamTracer second = inner.newClientStreamTracer(info, headers);
                return new ForwardingClientStreamTracer() {
                    @Override
                    protected ClientStreamTracer delegate() {
                        return second;
                    }

                    @Override
                    public void inboundTrailers(Metadata trailers) {
                        first.inboundTrailers(trailers);
                        super.inboundTrailers(trailers);
                    }

                    @Override
                    public void streamClosed(Status status) {
                        first.streamClosed(status);
                        super.streamClosed(status);
                    }
                };
            }
        };
    }

    @Override
    public int hashCode() {
        int sum = 0;
        for (SubchannelPicker picker : pickers) {
            sum += picker.hashCode();
        }
        return sum;
    }

    /**
     * Same replicas in the pick with the same pickers and the same rules: the same picker (the
     * balancer then sends no update).
     */
    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Picker that) || that.ready.length != ready.length || !that.rules.equals(rules)) {
            return false;
        }
        for (int i = 0; i < ready.length; i++) {
            if (that.ready[i] != ready[i] || that.pickers[i] != pickers[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return (rules.roundRobin() ? "RoundRobinPicker[" : "PeakEwmaPicker[") + ready.length + " in the pick]";
    }
}
