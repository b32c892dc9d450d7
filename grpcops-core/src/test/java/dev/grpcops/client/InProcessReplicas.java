package dev.grpcops.client;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.inprocess.InProcessSocketAddress;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/**
 * Stock replicas as in-process servers behind one channel, on a {@link FakeClock}: each answers
 * after its own latency of fake time (or fails with its own status), and the channel's balancer
 * measures that latency on the same clock, judges ejection on its timer, and draws from a seeded
 * random source, so that which replica gets which call is the same on every run and on any machine. The channel resolves to the
 * replicas this fixture lists ({@link #add}, {@link #remove}), one address group each, as a headless
 * Service's DNS name would; the service config is what {@link ServiceConfigs} builds, with the
 * balancer swapped for this fixture's instance of it.
 */
public final class InProcessReplicas implements AutoCloseable {

    /** The health name each replica reports, for {@code healthCheck(HEALTH_NAME)} configs. */
    public static final String HEALTH_NAME = "chain.v1.Stock";

    private static final AtomicInteger fixtures = new AtomicInteger();

    private final FakeClock clock;
    private final String name = "replicas-" + fixtures.incrementAndGet() + "-" + System.nanoTime();
    private final PeakEwmaLoadBalancerProvider peakEwma;
    private final RoundRobinLoadBalancerProvider roundRobin;
    private final List<io.grpc.LoadBalancerProvider> registered;
    private final List<Replica> replicas = new CopyOnWriteArrayList<>();
    /**
     * Calls started and not yet at a replica (on their way through the channel's own threads): fake
     * time stands still until there are none, so that no call is charged time it spent in transit.
     */
    private final java.util.Set<String> inTransit = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final AtomicInteger callIds = new AtomicInteger();
    private static final Metadata.Key<String> CALL_ID =
            Metadata.Key.of("fixture-call-id", Metadata.ASCII_STRING_MARSHALLER);
    private final ManagedChannel channel;
    private final ManualResolver resolver = new ManualResolver();
    /** What the name resolver sends as the service config; null: none (the channel's default applies). */
    private volatile Map<String, ?> resolvedConfig;

    /** The picker the channel's balancer gave it last. */
    private volatile io.grpc.LoadBalancer.SubchannelPicker balancerPicker;

    /** One Stock replica: its latency or failure, its health, the calls it received. */
    public final class Replica extends StockGrpc.StockImplBase {

        final String address;
        /** Replaced by {@link #restart}. */
        volatile Server server;

        final HealthStatusManager health = new HealthStatusManager();
        private final AtomicInteger calls = new AtomicInteger();
        private final AtomicInteger cancelled = new AtomicInteger();
        private volatile Duration latency = Duration.ofMillis(1);
        private volatile Status failure;
        private volatile Metadata failureTrailers;
        private volatile IntPredicate failing = call -> true;

        private Replica(String address, boolean listening) throws java.io.IOException {
            this.address = address;
            this.server = listening ? start() : null;
            health.setStatus(HEALTH_NAME, ServingStatus.SERVING);
        }

        /** Starts listening: a replica {@link #addAbsent listed before it listened} comes up. */
        public Replica listen() throws java.io.IOException {
            if (server == null) {
                server = start();
            }
            return this;
        }

        private Server start() throws java.io.IOException {
            return InProcessServerBuilder.forName(address)
                    .directExecutor()
                    .addService(io.grpc.ServerInterceptors.intercept(this, new io.grpc.ServerInterceptor() {
                        @Override
                        public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(
                                io.grpc.ServerCall<Q, R> call, Metadata headers, io.grpc.ServerCallHandler<Q, R> next) {
                            String id = headers.get(CALL_ID);
                            if (id != null) {
                                inTransit.remove(id);
                            }
                            return next.startCall(call, headers);
                        }
                    }))
                    .addService(health.getHealthService())
                    .build()
                    .start();
        }

        /**
         * Stops this replica's server, waits until the channel has it out of its picks, runs
         * {@code meanwhile}, then starts it again at the same address (a container restarted in its
         * pod: same IP, cold) and waits until the channel has it back.
         */
        public Replica restart(Meanwhile meanwhile) throws Exception {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!channelSeesItGone() && System.nanoTime() < until) {
                call(3, 3);
            }
            if (!channelSeesItGone()) {
                throw new IllegalStateException(address + " still picked 10 s after it stopped");
            }
            meanwhile.run();
            server = start();
            awaitOffered();
            return this;
        }

        /** Waits, calling nothing, until the channel's balancer offers this replica to its picks. */
        public Replica awaitOffered() throws InterruptedException {
            return awaitOffered(true);
        }

        /** Waits, calling nothing, until the channel's balancer no longer offers this replica (health, a stop). */
        public Replica awaitNotOffered() throws InterruptedException {
            return awaitOffered(false);
        }

        private Replica awaitOffered(boolean offered) throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (offered() != offered) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException(
                            address + (offered ? " not offered" : " still offered") + " to the picks after 10 s");
                }
                Thread.sleep(1); // the channel's threads connecting, checking health, hearing a change
            }
            return this;
        }

        /** Whether the balancer's current picker can pick this replica (ready, not ejected). */
        public boolean offered() {
            return ours(balancerPicker) instanceof Picker picker
                    && picker.offers(key -> key.toString().contains(address + "]")
                            || key.toString().contains(address + ","));
        }

        private boolean channelSeesItGone() throws InterruptedException {
            return call(30, 3).get(replicas.indexOf(this)) == 0;
        }

        /** Answers after {@code latency} of fake time from now on. */
        public Replica latency(Duration latency) {
            this.latency = latency;
            return this;
        }

        /** Fails every call with {@code status} (after its latency); null to answer again. */
        public Replica failWith(Status status) {
            return failWith(status, call -> true);
        }

        /** Fails the calls whose number (from 1, counted by this replica) {@code which} accepts. */
        public Replica failWith(Status status, IntPredicate which) {
            return failWith(status, null, which);
        }

        /** As {@link #failWith(Status, IntPredicate)}, the failures carrying {@code trailers}. */
        public Replica failWith(Status status, Metadata trailers, IntPredicate which) {
            this.failing = which;
            this.failureTrailers = trailers;
            this.failure = status;
            return this;
        }

        public Replica serving(boolean serving) {
            health.setStatus(HEALTH_NAME, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
            return this;
        }

        /** Calls this replica received since the last {@link #resetCalls}. */
        public int calls() {
            return calls.get();
        }

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            int call = calls.incrementAndGet();
            Status fails = failure;
            Metadata trailers = failureTrailers;
            var observer = (io.grpc.stub.ServerCallStreamObserver<CheckReply>) responses;
            observer.setOnCancelHandler(cancelled::incrementAndGet);
            Runnable answer = fails != null && failing.test(call)
                    ? () -> responses.onError(fails.asRuntimeException(trailers))
                    : () -> {
                        responses.onNext(
                                CheckReply.newBuilder().setSku(request.getSku()).build());
                        responses.onCompleted();
                    };
            clock.scheduler()
                    .schedule(
                            () -> {
                                if (!observer.isCancelled()) { // a caller that gave up hears nothing more
                                    answer.run();
                                }
                            },
                            latency.toNanos(),
                            TimeUnit.NANOSECONDS);
        }
    }

    /**
     * {@code count} replicas, answering after 1 ms each, behind one channel with {@code serviceConfig};
     * the balancer draws from a random source seeded with {@code seed}.
     */
    public InProcessReplicas(FakeClock clock, int count, Map<String, ?> serviceConfig, long seed) throws Exception {
        this.clock = clock;
        Random random = new Random(seed);
        String suffix = "_" + name.replace('-', '_');
        this.peakEwma = new PeakEwmaLoadBalancerProvider(
                PeakEwmaLoadBalancerProvider.POLICY_NAME + suffix, clock.nanoClock(), () -> random, clock.scheduler());
        this.roundRobin = new RoundRobinLoadBalancerProvider(
                RoundRobinLoadBalancerProvider.POLICY_NAME + suffix,
                clock.nanoClock(),
                () -> random,
                clock.scheduler());
        this.registered = List.of(watched(peakEwma), watched(roundRobin));
        registered.forEach(LoadBalancerRegistry.getDefaultRegistry()::register);
        for (int i = 0; i < count; i++) {
            replicas.add(new Replica(name + "-" + i, true));
        }
        this.channel = channel(name + ":///replicas", resolver)
                .intercept(new io.grpc.ClientInterceptor() {
                    @Override
                    public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
                            io.grpc.MethodDescriptor<Q, R> method, io.grpc.CallOptions options, io.grpc.Channel next) {
                        return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(
                                next.newCall(method, options)) {
                            @Override
                            public void start(Listener<R> listener, Metadata headers) {
                                String id = Integer.toString(callIds.incrementAndGet());
                                headers.put(CALL_ID, id);
                                inTransit.add(id);
                                super.start(
                                        new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                                                listener) {
                                            @Override
                                            public void onClose(Status status, Metadata trailers) {
                                                inTransit.remove(id); // ended without reaching a replica
                                                super.onClose(status, trailers);
                                            }
                                        },
                                        headers);
                            }
                        };
                    }
                })
                .intercept(dev.grpcops.retry.Retry.clientInterceptor()) // for tests that call through a Retry
                .directExecutor()
                .defaultServiceConfig(renamed(serviceConfig))
                .build();
        awaitEveryReplica();
    }

    /**
     * The balancer's own picker inside {@code picker}: grpc-java wraps it (health checking) in
     * pickers that hold it in a field of theirs.
     */
    private static Object ours(Object picker) {
        for (int depth = 0; depth < 5 && picker != null && !(picker instanceof Picker); depth++) {
            Object inner = null;
            for (java.lang.reflect.Field field : picker.getClass().getDeclaredFields()) {
                if (io.grpc.LoadBalancer.SubchannelPicker.class.isAssignableFrom(field.getType())) {
                    try {
                        field.setAccessible(true);
                        inner = field.get(picker);
                    } catch (ReflectiveOperationException | RuntimeException e) {
                        return null;
                    }
                    break;
                }
            }
            picker = inner;
        }
        return picker;
    }

    /** {@code provider} under its own name, the pickers its balancers make seen by this fixture. */
    private io.grpc.LoadBalancerProvider watched(io.grpc.LoadBalancerProvider provider) {
        return new io.grpc.LoadBalancerProvider() {
            @Override
            public boolean isAvailable() {
                return true;
            }

            @Override
            public int getPriority() {
                return provider.getPriority();
            }

            @Override
            public String getPolicyName() {
                return provider.getPolicyName();
            }

            @Override
            public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> config) {
                return provider.parseLoadBalancingPolicyConfig(config);
            }

            @Override
            public io.grpc.LoadBalancer newLoadBalancer(io.grpc.LoadBalancer.Helper helper) {
                return provider.newLoadBalancer(new io.grpc.util.ForwardingLoadBalancerHelper() {
                    @Override
                    protected io.grpc.LoadBalancer.Helper delegate() {
                        return helper;
                    }

                    @Override
                    public void updateBalancingState(
                            io.grpc.ConnectivityState state, io.grpc.LoadBalancer.SubchannelPicker picker) {
                        // After the channel has it: a test that sees a replica offered then calls through it.
                        super.updateBalancingState(state, picker);
                        balancerPicker = picker;
                    }
                });
            }
        };
    }

    /**
     * Calls until every replica has answered one: each connection made and its health check
     * SERVING, which the channel's own threads do at their pace (a loaded machine's).
     */
    private void awaitEveryReplica() throws InterruptedException {
        for (int round = 0; round < 2000; round++) {
            if (call(3 * replicas.size(), 3).stream().allMatch(calls -> calls > 0)) {
                resetCalls();
                return;
            }
            Thread.sleep(5); // the channel's threads connecting, not a synchronisation of this test's own
        }
        throw new IllegalStateException("not every replica answered within 10 s: " + calls());
    }

    @SuppressWarnings("deprecation") // the one way a channel builder takes a resolver of its own
    private static InProcessChannelBuilder channel(String target, NameResolverProvider resolver) {
        return InProcessChannelBuilder.forTarget(target).nameResolverFactory(resolver);
    }

    /** The replica at {@code index}, in the order they were made. */
    public Replica replica(int index) {
        return replicas.get(index);
    }

    public ManagedChannel channel() {
        return channel;
    }

    /** One more replica, listed at once (a new pod that the resolver sees). */
    public Replica add() throws Exception {
        return add(true);
    }

    /** One more replica listed before it listens (an endpoint published before its server is up). */
    public Replica addAbsent() throws Exception {
        return add(false);
    }

    private Replica add(boolean listening) throws Exception {
        Replica replica = new Replica(name + "-" + replicas.size(), listening);
        replicas.add(replica);
        resolver.update();
        return replica;
    }

    /** Stops {@code replica} and lists it no more. */
    public void remove(Replica replica) throws InterruptedException {
        replicas.remove(replica);
        resolver.update();
        if (replica.server != null) {
            replica.server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * The name resolver sends {@code serviceConfig} from now on (a service config changed at run
     * time, as a DNS TXT record or xDS would change it); the channel's balancer gets it at once.
     */
    public void reconfigure(Map<String, ?> serviceConfig) {
        resolvedConfig = renamed(serviceConfig);
        resolver.update();
    }

    /** Zeroes every replica's call count. */
    public void resetCalls() {
        replicas.forEach(replica -> replica.calls.set(0));
    }

    /** The calls the replicas saw their callers cancel, in all. */
    public int cancelled() {
        return replicas.stream().mapToInt(replica -> replica.cancelled.get()).sum();
    }

    /** Each replica's calls since the last {@link #resetCalls}, in order. */
    public List<Integer> calls() {
        return replicas.stream().map(Replica::calls).toList();
    }

    /**
     * {@code n} calls in batches of {@code concurrency}: each batch started at once, then fake time
     * moved on until all of it answered. Returns each replica's calls, counted afresh.
     */
    public List<Integer> call(int n, int concurrency) throws InterruptedException {
        return run(n, concurrency, Caller.PLAIN).calls();
    }

    /** What a test does while a replica is away. */
    @FunctionalInterface
    public interface Meanwhile {
        void run() throws Exception;
    }

    /** How a test's caller makes one call of a batch: plainly, through a {@code Retry}, as a warm-up… */
    @FunctionalInterface
    public interface Caller {

        Caller PLAIN = StockGrpc.StockFutureStub::check;

        ListenableFuture<CheckReply> call(StockGrpc.StockFutureStub stub, CheckRequest request);
    }

    /** What {@link #run} saw: each replica's calls, and how many of the callers' calls ended with each code. */
    public record Results(List<Integer> calls, Map<Status.Code, Integer> codes) {

        /** Calls that ended with {@code code}. */
        public int ended(Status.Code code) {
            return codes.getOrDefault(code, 0);
        }
    }

    /**
     * {@code n} calls made by {@code caller} in batches of {@code concurrency}, each batch started
     * at once, then fake time moved on until all of it ended.
     */
    public Results run(int n, int concurrency, Caller caller) throws InterruptedException {
        resetCalls();
        Map<Status.Code, Integer> codes = new java.util.EnumMap<>(Status.Code.class);
        for (int done = 0; done < n; done += concurrency) {
            List<ListenableFuture<CheckReply>> batch = new ArrayList<>();
            for (int i = 0; i < Math.min(concurrency, n - done); i++) {
                batch.add(caller.call(
                        StockGrpc.newFutureStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS),
                        CheckRequest.newBuilder().setSku("s").build()));
            }
            awaitAll(batch);
            for (ListenableFuture<CheckReply> call : batch) {
                codes.merge(codeOf(call), 1, Integer::sum);
            }
        }
        return new Results(calls(), codes);
    }

    private static Status.Code codeOf(ListenableFuture<?> call) {
        try {
            call.get();
            return Status.Code.OK;
        } catch (ExecutionException e) {
            return Status.fromThrowable(e.getCause()).getCode();
        } catch (java.util.concurrent.CancellationException e) {
            return Status.Code.CANCELLED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Status.Code.UNKNOWN;
        }
    }

    /**
     * Moves fake time on, a millisecond at a time, until every call of {@code batch} has ended; it
     * stands still while a call is on its way to a replica (the channel's threads, at a loaded
     * machine's pace), so that what a call is measured to take is its replica's latency alone.
     */
    public void awaitAll(Collection<? extends ListenableFuture<?>> batch) throws InterruptedException {
        for (int step = 0; !batch.stream().allMatch(ListenableFuture::isDone); step++) {
            if (step > 600_000) {
                throw new AssertionError("calls still unanswered after 10 minutes of fake time");
            }
            awaitInTransit();
            clock.forwardMillis(1);
        }
    }

    /** Moves fake time on by {@code duration}, a millisecond at a time, as {@link #awaitAll} does. */
    public void advance(Duration duration) throws InterruptedException {
        for (long ms = 0; ms < duration.toMillis(); ms++) {
            awaitInTransit();
            clock.forwardMillis(1);
        }
    }

    private void awaitInTransit() throws InterruptedException {
        long waitedUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!inTransit.isEmpty() && System.nanoTime() < waitedUntil) {
            Thread.sleep(1); // the channel's threads carrying a call to its replica
        }
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        for (Replica replica : replicas) {
            if (replica.server != null) {
                replica.server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        clock.forward(Duration.ofMinutes(10)); // answers of calls cut off, now to no one
        registered.forEach(LoadBalancerRegistry.getDefaultRegistry()::deregister);
    }

    /** {@code config} with this fixture's balancers in place of the library's. */
    @SuppressWarnings("unchecked")
    private Object renamedValue(Object value) {
        if (value instanceof Map<?, ?> map) {
            return renamed((Map<String, ?>) map);
        }
        if (value instanceof List<?> list) {
            return list.stream().map(this::renamedValue).toList();
        }
        return value;
    }

    private Map<String, ?> renamed(Map<String, ?> config) {
        Map<String, Object> copy = new LinkedHashMap<>();
        config.forEach((key, value) -> copy.put(
                key.equals(PeakEwmaLoadBalancerProvider.POLICY_NAME)
                        ? peakEwma.getPolicyName()
                        : key.equals(RoundRobinLoadBalancerProvider.POLICY_NAME) ? roundRobin.getPolicyName() : key,
                renamedValue(value)));
        return copy;
    }

    /** Lists the replicas, one address group each. */
    private final class ManualResolver extends NameResolverProvider {

        private final List<Resolver> started = new CopyOnWriteArrayList<>();

        void update() {
            started.forEach(Resolver::resolve);
        }

        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return 5;
        }

        @Override
        public String getDefaultScheme() {
            return name;
        }

        @Override
        public NameResolver newNameResolver(URI target, NameResolver.Args args) {
            Resolver resolver = new Resolver(args);
            started.add(resolver);
            return resolver;
        }

        @Override
        public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
            return List.of(InProcessSocketAddress.class);
        }

        private final class Resolver extends NameResolver {

            private final Args args;
            private Listener2 listener;

            Resolver(Args args) {
                this.args = args;
            }

            @Override
            public String getServiceAuthority() {
                return "replicas";
            }

            @Override
            public void start(Listener2 listener) {
                this.listener = listener;
                resolve();
            }

            void resolve() {
                args.getSynchronizationContext().execute(() -> {
                    if (listener == null) {
                        return;
                    }
                    List<EquivalentAddressGroup> groups = replicas.stream()
                            .map(replica -> new EquivalentAddressGroup(new InProcessSocketAddress(replica.address)))
                            .toList();
                    ResolutionResult.Builder result =
                            ResolutionResult.newBuilder().setAddressesOrError(io.grpc.StatusOr.fromValue(groups));
                    Map<String, ?> config = resolvedConfig;
                    if (config != null) {
                        result.setServiceConfig(args.getServiceConfigParser().parseServiceConfig(config));
                    }
                    listener.onResult2(result.build());
                });
            }

            @Override
            public void refresh() {
                resolve();
            }

            @Override
            public void shutdown() {
                listener = null;
                started.remove(this);
            }
        }
    }
}
