package dev.grpcops.client;

import dev.grpcops.internal.PickHint;
import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.util.ForwardingClientStreamTracer;
import io.grpc.util.MultiChildLoadBalancer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The balancer behind {@link PeakEwmaLoadBalancerProvider}: one pick_first child per replica (as
 * round_robin), and a picker that draws two ready replicas at random and takes the one with the lower
 * cost = peak-EWMA latency × (outstanding + 1). Every call's latency and status feed its replica's
 * cost when the call ends, from the stream's tracer.
 */
final class PeakEwmaLoadBalancer extends MultiChildLoadBalancer {

    /** The parsed policy config; times in nanoseconds. */
    record Config(long decayNanos, long failurePenaltyNanos) {}

    /** A replica's cost before it has answered, when no other replica has either. */
    static final long INITIAL_COST_NANOS = 5_000_000L;

    private final LongSupplier nanoClock;
    private final Supplier<RandomGenerator> random;
    private volatile Config config = new Config(
            PeakEwmaLoadBalancerProvider.DEFAULT_DECAY.toNanos(),
            PeakEwmaLoadBalancerProvider.DEFAULT_FAILURE_PENALTY.toNanos());
    private SubchannelPicker currentPicker;

    PeakEwmaLoadBalancer(Helper helper, LongSupplier nanoClock, Supplier<RandomGenerator> random) {
        super(helper);
        this.nanoClock = nanoClock;
        this.random = random;
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses resolvedAddresses) {
        Object parsed = resolvedAddresses.getLoadBalancingPolicyConfig();
        if (parsed instanceof Config given) {
            config = given;
        }
        return super.acceptResolvedAddresses(resolvedAddresses);
    }

    @Override
    protected ChildLbState createChildLbState(Object key) {
        return new Replica(key, initialCost());
    }

    /** A replica that joins starts at the mean cost of those already known, so it is neither flooded nor shunned. */
    private long initialCost() {
        long now = nanoClock.getAsLong();
        double sum = 0;
        int count = 0;
        for (ChildLbState child : getChildLbStates()) {
            if (child instanceof Replica replica) {
                sum += replica.cost(now);
                count++;
            }
        }
        return count == 0 ? INITIAL_COST_NANOS : Math.max(1, Math.round(sum / count));
    }

    @Override
    protected void updateOverallBalancingState() {
        List<ChildLbState> ready = getReadyChildren();
        if (!ready.isEmpty()) {
            update(ConnectivityState.READY, new Picker(ready, nanoClock, random));
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

    private void update(ConnectivityState state, SubchannelPicker picker) {
        if (state != currentConnectivityState || !picker.equals(currentPicker)) {
            getHelper().updateBalancingState(state, picker);
            currentConnectivityState = state;
            currentPicker = picker;
        }
    }

    /** One replica: its pick_first child, its calls outstanding, and its peak-EWMA latency. */
    final class Replica extends ChildLbState {

        private final AtomicInteger outstanding = new AtomicInteger();
        private final ClientStreamTracer.Factory tracers = new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                return new CallTracer(Replica.this, nanoClock.getAsLong());
            }
        };
        private final PeakEwma latency;

        Replica(Object key, long initialCostNanos) {
            super(key, pickFirstLbProvider);
            this.latency = new PeakEwma(initialCostNanos, nanoClock.getAsLong());
        }

        @Override
        protected ChildLbStateHelper createChildHelper() {
            return new ChildLbStateHelper() {
                @Override
                public void updateBalancingState(ConnectivityState newState, SubchannelPicker newPicker) {
                    super.updateBalancingState(newState, newPicker);
                    // As round_robin: a replica whose connection went idle reconnects at once.
                    if (!resolvingAddresses && newState == ConnectivityState.IDLE) {
                        getLb().requestConnection();
                    }
                }
            };
        }

        /** The latency cost now: it decays towards zero while the replica is not heard from. */
        double cost(long now) {
            return latency.cost(now, config.decayNanos());
        }

        /** What a pick weighs: latency cost × (calls outstanding + 1). */
        double load(long now) {
            return cost(now) * (outstanding.get() + 1);
        }

        int outstanding() {
            return outstanding.get();
        }

        /**
         * A call ended after {@code rttNanos} with {@code code}. A fast failure counts as the penalty;
         * a call cut short (cancelled, out of time) only ever raises the cost, since its true latency
         * was longer than what was seen.
         */
        void observe(long rttNanos, Status.Code code, long now) {
            Config current = config;
            switch (code) {
                case UNAVAILABLE, RESOURCE_EXHAUSTED ->
                    latency.observe(
                            now, Math.max(rttNanos, current.failurePenaltyNanos()), false, current.decayNanos());
                case CANCELLED, DEADLINE_EXCEEDED -> latency.observe(now, rttNanos, true, current.decayNanos());
                default -> latency.observe(now, rttNanos, false, current.decayNanos());
            }
        }

        void started() {
            outstanding.incrementAndGet();
        }

        void ended(long rttNanos, Status.Code code, long now) {
            outstanding.decrementAndGet();
            observe(rttNanos, code, now);
        }
    }

    /** Follows one call on one replica. */
    private final class CallTracer extends ClientStreamTracer {

        private final Replica replica;
        private final long startNanos;

        CallTracer(Replica replica, long startNanos) {
            this.replica = replica;
            this.startNanos = startNanos;
            replica.started();
        }

        @Override
        public void streamClosed(Status status) {
            long now = nanoClock.getAsLong();
            replica.ended(now - startNanos, status.getCode(), now);
        }
    }

    /** Power of two choices over the ready replicas. */
    static final class Picker extends SubchannelPicker {

        private final Replica[] ready;
        private final SubchannelPicker[] pickers;
        private final LongSupplier nanoClock;
        private final Supplier<RandomGenerator> random;

        Picker(Collection<ChildLbState> children, LongSupplier nanoClock, Supplier<RandomGenerator> random) {
            this.ready = children.stream().map(Replica.class::cast).toArray(Replica[]::new);
            this.pickers = new SubchannelPicker[ready.length];
            for (int i = 0; i < ready.length; i++) {
                pickers[i] = ready[i].getCurrentPicker();
            }
            this.nanoClock = nanoClock;
            this.random = random;
        }

        @Override
        public PickResult pickSubchannel(PickSubchannelArgs args) {
            PickHint hint = args.getCallOptions().getOption(PickHint.KEY);
            Object avoid = hint == null ? null : hint.avoid();
            int chosen = choose(avoid);
            Replica replica = ready[chosen];
            if (hint != null) {
                hint.picked(replica.getKey());
            }
            PickResult result = pickers[chosen].pickSubchannel(args);
            if (result.getSubchannel() == null) {
                return result;
            }
            ClientStreamTracer.Factory inner = result.getStreamTracerFactory();
            return result.copyWithStreamTracerFactory(
                    inner == null ? replica.tracers : chained(replica.tracers, inner));
        }

        /** Two distinct replicas at random (never {@code avoid} when another is ready); the cheaper one. */
        private int choose(Object avoid) {
            int n = ready.length;
            if (n == 1) {
                return 0;
            }
            RandomGenerator random = this.random.get();
            int excluded = -1;
            if (avoid != null) {
                for (int i = 0; i < n; i++) {
                    if (ready[i].getKey().equals(avoid)) {
                        excluded = i;
                        break;
                    }
                }
            }
            if (excluded >= 0 && n == 2) {
                return 1 - excluded;
            }
            int candidates = excluded >= 0 ? n - 1 : n;
            int a = random.nextInt(candidates);
            int b = random.nextInt(candidates - 1);
            if (b >= a) {
                b++;
            }
            if (excluded >= 0) {
                a = a >= excluded ? a + 1 : a;
                b = b >= excluded ? b + 1 : b;
            }
            long now = nanoClock.getAsLong();
            double loadA = ready[a].load(now);
            double loadB = ready[b].load(now);
            return loadA < loadB || loadA == loadB && random.nextBoolean() ? a : b;
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

        /** Same ready children with the same pickers: the same picker (the balancer then sends no update). */
        @Override
        public boolean equals(Object other) {
            if (!(other instanceof Picker that) || that.ready.length != ready.length) {
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
            return "PeakEwmaPicker[" + ready.length + " ready]";
        }
    }
}
