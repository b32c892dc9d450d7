package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ReconnectNudgerTests {

    private static final Duration INTERVAL = Duration.ofMillis(50);
    /** Far more than the few intervals any wait here is about, for a loaded 2-core machine. */
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private final List<ReconnectNudger> nudgers = new ArrayList<>();

    @AfterEach
    void close() {
        nudgers.forEach(ReconnectNudger::close);
    }

    @Test
    void watchStartsConnectingTheChannelRightAway() {
        FakeChannel channel = new FakeChannel(ConnectivityState.IDLE);

        nudger(INTERVAL).watch(channel);

        assertThat(channel.connectRequests).hasValue(1);
    }

    @Test
    void channelWithoutABackendIsNudgedEveryIntervalUntilItHasOne() {
        FakeChannel channel = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);

        nudger(INTERVAL).watch(channel);

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.resets).hasValueGreaterThanOrEqualTo(3));
    }

    @Test
    void firstNudgeComesAnIntervalAfterTheChannelLostItsLastBackend() {
        Duration interval = Duration.ofMillis(300);
        FakeChannel channel = new FakeChannel(ConnectivityState.READY);
        nudger(interval).watch(channel);

        long lost = System.nanoTime();
        channel.setState(ConnectivityState.TRANSIENT_FAILURE);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.resets).hasValueGreaterThanOrEqualTo(1));
        long firstNudge = channel.firstResetAt.get();

        // Not before the interval (gRPC's own first retry comes about then); and well within a few seconds.
        assertThat(Duration.ofNanos(firstNudge - lost))
                .isGreaterThanOrEqualTo(interval)
                .isLessThan(PATIENCE);
    }

    @Test
    void oneFailedNudgeDoesNotEndNudging() {
        FakeChannel channel = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);
        channel.failingResets.set(1);

        nudger(INTERVAL).watch(channel);

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.resets).hasValueGreaterThanOrEqualTo(3));
        assertThat(channel.failingResets).as("the failure did happen").hasValueLessThanOrEqualTo(0);
    }

    @Test
    void readyChannelIsNotAskedForItsStateAgain() {
        ReconnectNudger nudger = nudger(INTERVAL);
        FakeChannel ready = new FakeChannel(ConnectivityState.READY);
        FakeChannel down = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);
        nudger.watch(ready);
        nudger.watch(down);

        // The channel without a backend is the clock: five nudges are five intervals of the nudger at work.
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(down.resets).hasValueGreaterThanOrEqualTo(5));

        assertThat(ready.stateQueries).as("getState calls beyond watch()'s own").hasValue(0);
        assertThat(ready.resets).hasValue(0);
        assertThat(ready.pendingCallbacks())
                .as("it waits for a change instead")
                .containsExactly(ConnectivityState.READY);
    }

    @Test
    void channelThatLosesItsBackendsLaterIsNudgedAndStopsBeingNudgedOnceBackAgain() {
        ReconnectNudger nudger = nudger(INTERVAL);
        FakeChannel channel = new FakeChannel(ConnectivityState.READY);
        FakeChannel clock = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);
        nudger.watch(channel);
        nudger.watch(clock);

        channel.setState(ConnectivityState.CONNECTING);
        channel.setState(ConnectivityState.TRANSIENT_FAILURE);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.resets).hasValueGreaterThanOrEqualTo(2));

        channel.setState(ConnectivityState.CONNECTING);
        channel.setState(ConnectivityState.READY);
        // A nudge already deciding when the state changed may still land.
        int afterRecovery = channel.resets.get() + 1;
        int clockNow = clock.resets.get();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(clock.resets).hasValueGreaterThanOrEqualTo(clockNow + 5));

        assertThat(channel.resets).hasValueLessThanOrEqualTo(afterRecovery);
        assertThat(channel.pendingCallbacks()).containsExactly(ConnectivityState.READY);
    }

    /**
     * A channel whose balancer reports a replica it cannot reach (others READY, so the channel is
     * READY too) is nudged until the replica is back, so that a replica back from a restart or a
     * partition is not left to gRPC's grown backoff. The clock channel measures time, as above.
     */
    @Test
    void aChannelWhoseBalancerHasAReplicaDownIsNudgedUntilItIsBack() {
        ReconnectNudger nudger = nudger(INTERVAL);
        FakeChannel channel = new FakeChannel(ConnectivityState.READY, "partly-down.example");
        FakeChannel clock = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);
        nudger.watch(channel);
        nudger.watch(clock);
        Object balancer = new Object();

        ReplicasDown.report("partly-down.example", balancer, 1);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.resets).hasValueGreaterThanOrEqualTo(3));

        ReplicasDown.report("partly-down.example", balancer, 0);
        int afterRecovery = channel.resets.get() + 1;
        int clockNow = clock.resets.get();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(clock.resets).hasValueGreaterThanOrEqualTo(clockNow + 5));
        assertThat(channel.resets).hasValueLessThanOrEqualTo(afterRecovery);
    }

    @Test
    void channelBackInTransientFailureWhileTheNudgesWereStoppingIsStillNudged() {
        FakeChannel channel = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);
        // The nudger's first look catches a reconnect attempt (CONNECTING), and before it has acted
        // on that, the attempt fails: the channel is back in TRANSIENT_FAILURE. In life the state
        // changes on another thread; here it changes on the nudger's, in the window, every time.
        channel.answerFirstNudgerQuery(() -> {
            channel.setState(ConnectivityState.CONNECTING);
            channel.setState(ConnectivityState.TRANSIENT_FAILURE);
            return ConnectivityState.CONNECTING;
        });

        nudger(INTERVAL).watch(channel);

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.raceRan).isTrue());
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(channel.resets).hasValueGreaterThanOrEqualTo(2));
    }

    @Test
    void zeroIntervalNeverNudgesButStillConnects() {
        FakeChannel channel = new FakeChannel(ConnectivityState.TRANSIENT_FAILURE);

        nudger(Duration.ZERO).watch(channel);

        assertThat(channel.connectRequests).hasValue(1);
        assertThat(channel.pendingCallbacks()).as("nothing to follow with").isEmpty();
        assertThat(channel.resets).hasValue(0);
    }

    @Test
    void closedNudgerFollowsNoMoreChanges() {
        ReconnectNudger nudger = nudger(INTERVAL);
        FakeChannel channel = new FakeChannel(ConnectivityState.READY);
        nudger.watch(channel);

        nudger.close();
        channel.setState(ConnectivityState.TRANSIENT_FAILURE);

        assertThat(channel.pendingCallbacks()).isEmpty();
    }

    @Test
    void shutDownChannelIsNoLongerFollowed() {
        FakeChannel channel = new FakeChannel(ConnectivityState.READY);
        nudger(INTERVAL).watch(channel);

        channel.shutdown();
        channel.setState(ConnectivityState.SHUTDOWN);

        assertThat(channel.pendingCallbacks()).isEmpty();
    }

    private ReconnectNudger nudger(Duration interval) {
        ReconnectNudger nudger = new ReconnectNudger(interval);
        nudgers.add(nudger);
        return nudger;
    }

    /**
     * A channel whose state the test sets. Records its callbacks (run on the thread that changes
     * the state) and counts what the nudger asks of it.
     */
    private static final class FakeChannel extends ManagedChannel {

        /** getState(true) calls. */
        final AtomicInteger connectRequests = new AtomicInteger();
        /** getState(false) calls, the first getState(true) left out. */
        final AtomicInteger stateQueries = new AtomicInteger();
        /** resetConnectBackoff calls, the failed ones included. */
        final AtomicInteger resets = new AtomicInteger();

        final AtomicReference<Long> firstResetAt = new AtomicReference<>();
        /** How many of the next resetConnectBackoff calls throw. */
        final AtomicInteger failingResets = new AtomicInteger();

        final AtomicBoolean raceRan = new AtomicBoolean();

        private final List<Callback> callbacks = new ArrayList<>();
        private ConnectivityState state;
        private volatile boolean shutdown;
        private volatile Supplier<ConnectivityState> firstNudgerQuery;

        private final String authority;

        FakeChannel(ConnectivityState state) {
            this(state, "fake");
        }

        FakeChannel(ConnectivityState state, String authority) {
            this.state = state;
            this.authority = authority;
        }

        /** The first getState call on the nudger's own thread runs {@code race} and answers what it returns. */
        void answerFirstNudgerQuery(Supplier<ConnectivityState> race) {
            firstNudgerQuery = race;
        }

        void setState(ConnectivityState newState) {
            List<Runnable> due = new ArrayList<>();
            synchronized (this) {
                state = newState;
                callbacks.removeIf(callback -> {
                    if (callback.source != newState) {
                        due.add(callback.run);
                        return true;
                    }
                    return false;
                });
            }
            due.forEach(Runnable::run);
        }

        synchronized List<ConnectivityState> pendingCallbacks() {
            return callbacks.stream().map(Callback::source).toList();
        }

        @Override
        public ConnectivityState getState(boolean requestConnection) {
            (requestConnection ? connectRequests : stateQueries).incrementAndGet();
            Supplier<ConnectivityState> race = firstNudgerQuery;
            if (race != null && Thread.currentThread().getName().equals("grpcops-timer")) {
                firstNudgerQuery = null;
                ConnectivityState answer = race.get();
                raceRan.set(true);
                return answer;
            }
            synchronized (this) {
                return state;
            }
        }

        @Override
        public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
            synchronized (this) {
                if (source == state) {
                    callbacks.add(new Callback(source, callback));
                    return;
                }
            }
            callback.run();
        }

        @Override
        public void resetConnectBackoff() {
            resets.incrementAndGet();
            firstResetAt.compareAndSet(null, System.nanoTime());
            if (failingResets.getAndDecrement() > 0) {
                throw new IllegalStateException("injected: resetConnectBackoff failed");
            }
        }

        @Override
        public ManagedChannel shutdown() {
            shutdown = true;
            return this;
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown;
        }

        @Override
        public ManagedChannel shutdownNow() {
            return shutdown();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return shutdown;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(
                MethodDescriptor<ReqT, RespT> method, CallOptions callOptions) {
            throw new UnsupportedOperationException("no calls on a fake channel");
        }

        @Override
        public String authority() {
            return authority;
        }

        private record Callback(ConnectivityState source, Runnable run) {}
    }
}
