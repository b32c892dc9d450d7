package dev.grpcops.simulation;

import dev.grpcops.client.BalancerProbe;
import dev.grpcops.proto.chain.v1.CheckReply;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ChannelLogger;
import io.grpc.ClientCall;
import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.Context;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The simulated network as one client channel sees it: a {@link ManagedChannel} whose balancer is
 * the library's own (on the world's clock and random source), with subchannels that connect,
 * fail, back off, and notice a silent peer only by keepalive, as grpc-java's do; and calls that
 * are picked, buffered while no replica is ready, sent as streams to {@link SimReplica}s, and ended
 * exactly once. Everything happens on the world's one thread, at the fake clock's time.
 */
final class SimChannel extends ManagedChannel {

    /** How long a stream's frames take between the channel and a replica. */
    static final long WIRE_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    /** grpc-java's first reconnect backoff, its multiplier and its cap (gRFC connection backoff). */
    static final long FIRST_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

    static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(120);
    /** A connect attempt gives up after this (gRFC: at least 20 s). */
    static final long CONNECT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** Linux retries an unanswered SYN after 1, 3, 7, 15 and 31 s. */
    static final long[] SYN_RETRIES_MILLIS = {1_000, 3_000, 7_000, 15_000, 31_000};

    private final Simulation world;
    /** How long after its peer goes silent a connection with calls open is found dead (keepalive time + timeout). */
    private final long keepaliveDetectNanos;

    private final SynchronizationContext sync;
    private final LoadBalancer balancer;
    private final Map<String, SimReplica> replicasByAddress = new HashMap<>();
    private final List<Sub> subchannels = new ArrayList<>();
    private final List<Call<?, ?>> waiting = new ArrayList<>();
    private final List<Runnable> stateWatchers = new ArrayList<>();
    private LoadBalancer.SubchannelPicker picker;
    private ConnectivityState state = ConnectivityState.IDLE;
    /** Picks made, for the share checks. */
    long picks;

    SimChannel(
            Simulation world,
            List<SimReplica> replicas,
            LoadBalancerProvider provider,
            Map<String, ?> policyConfig,
            long keepaliveDetectNanos) {
        this.world = world;
        this.keepaliveDetectNanos = keepaliveDetectNanos;
        this.sync = new SynchronizationContext((thread, failure) -> world.violation("the balancer threw: " + failure));
        this.balancer = provider.newLoadBalancer(new Helper());
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (SimReplica replica : replicas) {
            replicasByAddress.put(replica.address, replica);
            groups.add(new EquivalentAddressGroup(new Address(replica.address)));
        }
        Object config = provider.parseLoadBalancingPolicyConfig(policyConfig).getConfig();
        sync.execute(() -> balancer.acceptResolvedAddresses(LoadBalancer.ResolvedAddresses.newBuilder()
                .setAddresses(groups)
                .setLoadBalancingPolicyConfig(config)
                .build()));
    }

    /** Whether the balancer's picker now may pick {@code replica} (ready, not ejected). */
    boolean offers(SimReplica replica) {
        return picker != null && BalancerProbe.offers(picker, replica.address + "]");
    }

    /** Calls not ended yet: waiting for a pick or sent. */
    int open() {
        int open = waiting.size();
        for (Sub sub : subchannels) {
            open += sub.streams.size();
        }
        return open;
    }

    // The replicas' news, as the network carries it.

    void silenced(SimReplica replica) {
        for (Sub sub : subsOf(replica)) {
            if (sub.connected) {
                sub.keepalive = world.clock
                        .scheduler()
                        .schedule(
                                () -> {
                                    if (replica.silent && sub.connected) {
                                        sub.transportClosed(
                                                Status.UNAVAILABLE.withDescription("keepalive ping unanswered"));
                                    }
                                },
                                keepaliveDetectNanos,
                                TimeUnit.NANOSECONDS);
            }
        }
    }

    void healed(SimReplica replica) {
        for (Sub sub : subsOf(replica)) {
            if (sub.keepalive != null) {
                sub.keepalive.cancel(false);
                sub.keepalive = null;
            }
            sub.healed();
        }
    }

    void healthChanged(SimReplica replica) {
        for (Sub sub : subsOf(replica)) {
            if (sub.connected) {
                sub.set(replica.serving ? ConnectivityState.READY : ConnectivityState.TRANSIENT_FAILURE);
            }
        }
    }

    /** GOAWAY: no new streams on its connections; those open finish there. */
    void goingAway(SimReplica replica) {
        for (Sub sub : subsOf(replica)) {
            if (sub.connected) {
                sub.connected = false;
                sub.set(ConnectivityState.IDLE);
            }
        }
    }

    /** Its process ended: its connections close (FIN), their streams fail. */
    void connectionsClosed(SimReplica replica) {
        for (Sub sub : subsOf(replica)) {
            sub.transportClosed(Status.UNAVAILABLE.withDescription(replica.address + " closed the connection"));
        }
    }

    void listening(SimReplica replica) {
        // Subchannels backing off try again at their next attempt, as grpc-java's do.
    }

    private List<Sub> subsOf(SimReplica replica) {
        List<Sub> subs = new ArrayList<>();
        for (Sub sub : subchannels) {
            if (sub.replica == replica && !sub.shutdown) {
                subs.add(sub);
            }
        }
        return subs;
    }

    // ManagedChannel

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
        return new Call<>(method, options);
    }

    @Override
    public String authority() {
        return "stock";
    }

    @Override
    public ConnectivityState getState(boolean requestConnection) {
        return state;
    }

    @Override
    public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
        if (source != state) {
            world.clock.scheduler().execute(callback);
        } else {
            stateWatchers.add(callback);
        }
    }

    @Override
    public ManagedChannel shutdown() {
        sync.execute(balancer::shutdown);
        return this;
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public ManagedChannel shutdownNow() {
        return shutdown();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }

    private void balancingState(ConnectivityState newState, LoadBalancer.SubchannelPicker newPicker) {
        picker = newPicker;
        if (newState != state) {
            state = newState;
            List<Runnable> watchers = List.copyOf(stateWatchers);
            stateWatchers.clear();
            watchers.forEach(world.clock.scheduler()::execute);
        }
        if (!waiting.isEmpty()) {
            // As grpc-java's delayed transport: the calls waiting for a pick try the new picker.
            world.clock.scheduler().execute(() -> {
                List<Call<?, ?>> again = List.copyOf(waiting);
                waiting.clear();
                again.forEach(this::pick);
            });
        }
    }

    private void pick(Call<?, ?> call) {
        if (call.state != CallState.PICKING) {
            return;
        }
        if (picker == null) {
            waiting.add(call);
            return;
        }
        picks++;
        LoadBalancer.PickResult result = picker.pickSubchannel(call.args());
        if (result.getSubchannel() instanceof Sub sub) {
            if (sub.connected && sub.state == ConnectivityState.READY) {
                call.send(sub, result.getStreamTracerFactory());
            } else {
                waiting.add(call); // a picker a moment old: the next one decides
            }
        } else if (!result.getStatus().isOk() && (result.isDrop() || !call.options.isWaitForReady())) {
            call.close(result.getStatus(), new Metadata(), null);
        } else {
            waiting.add(call);
        }
    }

    enum CallState {
        NEW,
        PICKING,
        SENT,
        CLOSED
    }

    /** One client call: picked when its request is complete, then a stream, ended exactly once. */
    final class Call<ReqT, RespT> extends ClientCall<ReqT, RespT> {

        private final MethodDescriptor<ReqT, RespT> method;
        final CallOptions options;
        /** The front call this one was made for (from the context it was made in), or null. */
        private final Simulation.FrontCall front = Simulation.FRONT.get(Context.current());

        private Listener<RespT> listener;
        private Metadata headers;
        CallState state = CallState.NEW;
        private long deadlineAt = Long.MAX_VALUE;
        private ScheduledFuture<?> deadlineTimer;
        private Stream stream;
        private ClientStreamTracer tracer;
        private int closes;

        Call(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
            this.method = method;
            this.options = options;
        }

        LoadBalancer.PickSubchannelArgs args() {
            return new LoadBalancer.PickSubchannelArgs() {
                @Override
                public CallOptions getCallOptions() {
                    return options;
                }

                @Override
                public Metadata getHeaders() {
                    return headers;
                }

                @Override
                public MethodDescriptor<?, ?> getMethodDescriptor() {
                    return method;
                }
            };
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            this.listener = listener;
            this.headers = headers;
            if (options.getDeadline() != null) {
                long remaining = options.getDeadline().timeRemaining(TimeUnit.NANOSECONDS);
                deadlineAt = world.clock.nanoTime() + remaining;
                deadlineTimer = world.clock
                        .scheduler()
                        .schedule(this::deadlinePassed, Math.max(0, remaining), TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void request(int numMessages) {}

        @Override
        public void sendMessage(ReqT message) {}

        @Override
        public void halfClose() {
            if (state == CallState.NEW) {
                state = CallState.PICKING;
                pick(this);
            }
        }

        @Override
        public void cancel(String message, Throwable cause) {
            if (state == CallState.CLOSED || listener == null) {
                return;
            }
            if (state == CallState.SENT) {
                stream.reset();
            }
            close(Status.CANCELLED.withDescription(message).withCause(cause), new Metadata(), null);
        }

        private void deadlinePassed() {
            if (state == CallState.CLOSED) {
                return;
            }
            if (state == CallState.SENT && stream.server != null && !stream.replica().silent) {
                stream.server.clientGone(); // the replica's own timer for the call's deadline
            }
            close(Status.DEADLINE_EXCEEDED.withDescription("deadline passed (simulated)"), new Metadata(), null);
        }

        void send(Sub sub, ClientStreamTracer.Factory tracers) {
            if (front != null && front.departed()) {
                world.violation("a call was sent for a caller that had left (" + front + ")");
            }
            state = CallState.SENT;
            if (tracers != null) {
                tracer = tracers.newClientStreamTracer(
                        ClientStreamTracer.StreamInfo.newBuilder()
                                .setCallOptions(options)
                                .build(),
                        headers);
                tracer.streamCreated(Attributes.EMPTY, headers);
            }
            stream = new Stream(this, sub, headers, deadlineAt);
            sub.streams.add(stream);
            SimReplica replica = sub.replica;
            Stream sent = stream;
            world.clock.scheduler().schedule(() -> replica.accept(sent), WIRE_NANOS, TimeUnit.NANOSECONDS);
        }

        /**
         * The call ends: the tracer and the application hear it (the application a moment later, as
         * from grpc-java's call executor), and only once.
         */
        @SuppressWarnings("unchecked")
        void close(Status status, Metadata trailers, RespT response) {
            if (++closes > 1) {
                world.violation("a call ended twice: " + status);
                return;
            }
            boolean wasSent = state == CallState.SENT;
            state = CallState.CLOSED;
            waiting.remove(this);
            if (deadlineTimer != null) {
                deadlineTimer.cancel(false);
            }
            if (wasSent) {
                stream.sub.streams.remove(stream);
                if (tracer != null) {
                    tracer.inboundTrailers(trailers);
                    tracer.streamClosed(status);
                }
            }
            Listener<RespT> application = listener;
            world.clock.scheduler().execute(() -> {
                if (status.isOk()) {
                    application.onHeaders(new Metadata());
                    application.onMessage(response != null ? response : (RespT) CheckReply.getDefaultInstance());
                }
                application.onClose(status, trailers);
            });
        }
    }

    /** A call on a connection to a replica, as both ends see it. */
    final class Stream {

        final Call<?, ?> call;
        final Sub sub;
        final Metadata headers;
        /** The call's deadline on the world's clock; {@link Long#MAX_VALUE} for none. */
        final long deadlineAt;
        /** The replica's side, once it has the stream. */
        SimReplica.Served server;

        dev.grpcops.admission.Ticket serverTicket;

        Stream(Call<?, ?> call, Sub sub, Metadata headers, long deadlineAt) {
            this.call = call;
            this.sub = sub;
            this.headers = headers;
            this.deadlineAt = deadlineAt;
        }

        SimReplica replica() {
            return sub.replica;
        }

        /** The replica answers: the answer reaches the call a moment later, if it is still waiting. */
        void answer(Status status, Metadata trailers) {
            world.clock
                    .scheduler()
                    .schedule(
                            () -> {
                                if (call.state == CallState.SENT && call.stream == this) {
                                    call.close(status, trailers, null);
                                }
                            },
                            WIRE_NANOS,
                            TimeUnit.NANOSECONDS);
        }

        /** The caller cancels: an RST_STREAM goes to the replica. */
        void reset() {
            SimReplica replica = sub.replica;
            world.clock.scheduler().schedule(() -> replica.reset(this), WIRE_NANOS, TimeUnit.NANOSECONDS);
        }

        /** The replica's process is gone: the call fails at once. */
        void serverGone() {
            if (call.state == CallState.SENT && call.stream == this) {
                call.close(Status.UNAVAILABLE.withDescription("connection closed"), new Metadata(), null);
            }
        }
    }

    /**
     * A subchannel: one connection to one replica at a time, connecting, backing off, and going
     * IDLE when its connection closes, as grpc-java's InternalSubchannel does.
     */
    final class Sub extends LoadBalancer.Subchannel {

        final SimReplica replica;
        private final LoadBalancer.CreateSubchannelArgs args;
        private LoadBalancer.SubchannelStateListener listener;
        ConnectivityState state = ConnectivityState.IDLE;
        /** A connection is up, streams can go on it. */
        boolean connected;

        boolean shutdown;
        final List<Stream> streams = new ArrayList<>();
        private int failedAttempts;
        private long attemptStarted;
        private ScheduledFuture<?> attempt;
        private ScheduledFuture<?> backoff;
        ScheduledFuture<?> keepalive;

        Sub(LoadBalancer.CreateSubchannelArgs args, SimReplica replica) {
            this.args = args;
            this.replica = replica;
        }

        @Override
        public void start(LoadBalancer.SubchannelStateListener listener) {
            this.listener = listener;
        }

        @Override
        public void shutdown() {
            shutdown = true;
            connected = false;
            cancel(attempt);
            cancel(backoff);
            cancel(keepalive);
            set(ConnectivityState.SHUTDOWN);
        }

        @Override
        public void requestConnection() {
            if (!shutdown && state == ConnectivityState.IDLE) {
                connect();
            }
        }

        @Override
        public List<EquivalentAddressGroup> getAllAddresses() {
            return args.getAddresses();
        }

        @Override
        public Attributes getAttributes() {
            return Attributes.EMPTY;
        }

        @Override
        public ChannelLogger getChannelLogger() {
            return NO_LOG;
        }

        private void connect() {
            set(ConnectivityState.CONNECTING);
            attemptStarted = world.clock.nanoTime();
            attempt = world.clock.scheduler().schedule(this::attempted, WIRE_NANOS * 2, TimeUnit.NANOSECONDS);
        }

        private void attempted() {
            attempt = null;
            if (shutdown) {
                return;
            }
            if (replica.reachable()) {
                connected();
            } else if (replica.up && replica.silent) {
                // Its SYN goes unanswered: the attempt waits until the connect timeout, unless the
                // network heals in time and a retried SYN gets through (healed()).
                attempt = world.clock
                        .scheduler()
                        .schedule(
                                this::failed,
                                CONNECT_TIMEOUT_NANOS - (world.clock.nanoTime() - attemptStarted),
                                TimeUnit.NANOSECONDS);
            } else {
                failed(); // refused
            }
        }

        private void connected() {
            cancel(attempt);
            connected = true;
            failedAttempts = 0;
            set(replica.serving ? ConnectivityState.READY : ConnectivityState.TRANSIENT_FAILURE);
        }

        private void failed() {
            attempt = null;
            if (shutdown) {
                return;
            }
            set(ConnectivityState.TRANSIENT_FAILURE);
            double backoffNanos = Math.min(MAX_BACKOFF_NANOS, FIRST_BACKOFF_NANOS * Math.pow(1.6, failedAttempts++));
            long jittered = (long) (backoffNanos * (0.8 + 0.4 * world.uniform()));
            backoff = world.clock
                    .scheduler()
                    .schedule(
                            () -> {
                                backoff = null;
                                if (!shutdown) {
                                    connect();
                                }
                            },
                            jittered,
                            TimeUnit.NANOSECONDS);
        }

        /** The network is back: a connect attempt waiting on its SYN succeeds at the SYN's next retry. */
        void healed() {
            if (attempt == null || connected || state != ConnectivityState.CONNECTING) {
                return;
            }
            long elapsed = world.clock.nanoTime() - attemptStarted;
            for (long retryMillis : SYN_RETRIES_MILLIS) {
                long retry = TimeUnit.MILLISECONDS.toNanos(retryMillis);
                if (retry > elapsed) {
                    if (retry < CONNECT_TIMEOUT_NANOS) {
                        cancel(attempt);
                        attempt = world.clock
                                .scheduler()
                                .schedule(
                                        () -> {
                                            attempt = null;
                                            if (!shutdown && replica.reachable()) {
                                                connected();
                                            } else if (!shutdown) {
                                                failed();
                                            }
                                        },
                                        retry - elapsed,
                                        TimeUnit.NANOSECONDS);
                    }
                    return;
                }
            }
        }

        /** The connection is gone (closed by the peer, or found dead by keepalive): IDLE, its streams failed. */
        void transportClosed(Status status) {
            cancel(keepalive);
            keepalive = null;
            if (!connected) {
                return;
            }
            connected = false;
            for (Stream stream : List.copyOf(streams)) {
                if (stream.call.state == CallState.SENT) {
                    stream.call.close(status, new Metadata(), null);
                }
            }
            streams.clear();
            set(ConnectivityState.IDLE);
        }

        void set(ConnectivityState newState) {
            if (state == ConnectivityState.SHUTDOWN
                    || newState == state && newState != ConnectivityState.TRANSIENT_FAILURE) {
                return;
            }
            state = newState;
            if (listener == null) {
                return;
            }
            ConnectivityStateInfo info = newState == ConnectivityState.TRANSIENT_FAILURE
                    ? ConnectivityStateInfo.forTransientFailure(
                            Status.UNAVAILABLE.withDescription(replica.address + " unreachable"))
                    : ConnectivityStateInfo.forNonError(newState);
            sync.execute(() -> listener.onSubchannelState(info));
        }

        private void cancel(ScheduledFuture<?> task) {
            if (task != null) {
                task.cancel(false);
            }
        }

        @Override
        public String toString() {
            return "Sub[" + replica.address + ", " + state + "]";
        }
    }

    private final class Helper extends LoadBalancer.Helper {

        @Override
        public LoadBalancer.Subchannel createSubchannel(LoadBalancer.CreateSubchannelArgs args) {
            String address = args.getAddresses().get(0).getAddresses().get(0).toString();
            Sub sub = new Sub(args, replicasByAddress.get(address));
            subchannels.add(sub);
            return sub;
        }

        @Override
        public ManagedChannel createOobChannel(EquivalentAddressGroup eag, String authority) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void updateBalancingState(ConnectivityState newState, LoadBalancer.SubchannelPicker newPicker) {
            balancingState(newState, newPicker);
        }

        @Override
        public void refreshNameResolution() {}

        @Override
        public SynchronizationContext getSynchronizationContext() {
            return sync;
        }

        @Override
        public java.util.concurrent.ScheduledExecutorService getScheduledExecutorService() {
            return world.clock.scheduler();
        }

        @Override
        public String getAuthority() {
            return "stock";
        }

        @Override
        public ChannelLogger getChannelLogger() {
            return NO_LOG;
        }
    }

    /** A replica's address; what it prints as is how the balancer's picks are told apart. */
    private static final class Address extends SocketAddress {
        private static final long serialVersionUID = 1L;
        private final String name;

        Address(String name) {
            this.name = name;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Address that && that.name.equals(name);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static final ChannelLogger NO_LOG = new ChannelLogger() {
        @Override
        public void log(ChannelLogLevel level, String message) {}

        @Override
        public void log(ChannelLogLevel level, String messageFormat, Object... args) {}
    };
}
