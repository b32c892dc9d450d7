package dev.grpcops;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.SettableFuture;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.client.CallOutcome;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.Retry;
import dev.grpcops.shutdown.InFlightCalls;
import io.grpc.BindableService;
import io.grpc.EquivalentAddressGroup;
import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.inprocess.InProcessSocketAddress;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What one Checkout costs the library, held by the build: the bytes allocated for one Checkout
 * through the three hops in process, each served through {@link ServerStack} and calling through
 * {@link ChannelStack} with every feature a service runs by default (warm-up mark, budget,
 * admission with seats for downstream calls, in-flight count, malformed-request guard; retry
 * attempts, budget, caller forwarding, readiness, cancellation budget, peak-EWMA balancing under
 * outlier detection). Allocation is counted, not timed: it does not depend on the machine's
 * load, so a 10 % step shows where a timing benchmark on two shared cores cannot see one.
 *
 * <p>It holds what a failed downstream call costs the library as well (stack traces, mostly: under
 * overload calls fail by the thousand a second).
 *
 * <p>The budget is {@code per-call-budget.properties}; raising it is a commit that says why. The
 * count is the JVM's own (per-thread allocated bytes, every thread of the process), after a
 * warm-up long enough for the JIT to have compiled the path, the least of a few rounds.
 */
class PerCallCostTests {

    private static final int WARM_UP_CHECKOUTS = 30_000;
    private static final int ROUNDS = 5;
    private static final int CHECKOUTS_PER_ROUND = 5_000;
    /** How far over its budget a count may go before the build fails. */
    private static final double TOLERANCE = 1.10;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aCheckoutThroughTheThreeHopsAllocatesNoMoreThanItsBudget() throws Exception {
        Properties budget = budget();
        long budgetBytes = Long.parseLong(budget.getProperty("checkout.bytes"));
        try (Chain chain = new Chain(Stacks.EVERY_DEFAULT_FEATURE)) {
            assertWithinBudget(
                    "a Checkout through the three hops, every default feature on",
                    chain.bytesPerCheckout(),
                    budgetBytes,
                    "find what the change allocates per call, or raise the budget in a commit that says why");
        }
    }

    /**
     * The same chain with plain grpc-java channels and servers (no stack at all): what the library
     * adds is the difference, printed for the benchmarks page and held to be a share of the whole,
     * so that the budget above cannot pass by a change to the bare chain alone.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theBareChainAllocatesLessThanTheStackedOne() throws Exception {
        long bare;
        try (Chain chain = new Chain(Stacks.NONE)) {
            bare = chain.bytesPerCheckout();
        }
        long budgetBytes = Long.parseLong(budget().getProperty("checkout.bytes"));
        System.out.printf(
                "PerCallCost: the bare chain: %d bytes per Checkout; the stacks' budget adds %d%n",
                bare, budgetBytes - bare);
        assertThat(bare).isPositive().isLessThan(budgetBytes);
    }

    /**
     * A feature left out costs nothing per call: the stacks with every feature left out (no layer, no
     * guard, no keep-alive) allocate what plain grpc-java does, within the count's own spread.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theStacksWithEveryFeatureLeftOutAllocateWhatThePlainChainDoes() throws Exception {
        long bare;
        try (Chain chain = new Chain(Stacks.NONE)) {
            bare = chain.bytesPerCheckout();
        }
        long empty;
        try (Chain chain = new Chain(Stacks.EVERY_FEATURE_LEFT_OUT)) {
            empty = chain.bytesPerCheckout();
        }
        System.out.printf(
                "PerCallCost: the stacks with every feature left out: %d bytes per Checkout, plain grpc-java %d%n",
                empty, bare);
        assertThat(empty)
                .as("bytes per Checkout through stacks with no feature (%d) against plain grpc-java (%d)", empty, bare)
                .isLessThanOrEqualTo((long) (bare * 1.02));
    }

    /**
     * What a failed downstream call costs the library, as Pricing meets one when Stock sheds: the
     * call through {@link Retry#hedgeOnly}, the service's callback, {@link CallOutcome#relay}. Under
     * overload calls fail by the thousand a second, and each stack trace taken on the way costs more
     * than the rest of the call, so the count is taken 64 frames deep, where a stack trace costs
     * about what it does on a transport's thread. The failure itself is made once: grpc-java's stub
     * makes it, not the library.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFailedDownstreamCallAllocatesNoMoreThanItsBudget() throws Exception {
        long budgetBytes = Long.parseLong(budget().getProperty("failed-call.bytes"));
        FailedCalls calls = new FailedCalls();
        long measured = calls.bytesPerCall();
        assertThat(calls.relayed)
                .as("every call's failure reached its callback")
                .isEqualTo(calls.made);
        assertWithinBudget(
                "a failed downstream call, 64 frames deep",
                measured,
                budgetBytes,
                "a stack trace more per failure is about 2,000 of them");
    }

    /** Downstream calls that fail as shed ones do, each relayed by a callback as the services do. */
    private static final class FailedCalls {

        private static final int DEPTH = 64;
        private static final StatusRuntimeException SHED =
                Status.RESOURCE_EXHAUSTED.withDescription("shed").asRuntimeException();

        private final Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(Hedging.builder().build())
                .build();
        long made;
        long relayed;

        /** Counted on a thread of its own, so that the depth is {@link #DEPTH} whatever runs the test. */
        long bytesPerCall() throws InterruptedException {
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long[] least = new long[1];
            Thread counting = new Thread(() ->
                    least[0] = leastBytesPerCall(threads::getCurrentThreadAllocatedBytes, calls -> at(DEPTH, calls)));
            counting.start();
            counting.join();
            return least[0];
        }

        /** {@code calls} failed calls, {@code depth} frames below this one. */
        private void at(int depth, int calls) {
            if (depth > 0) {
                at(depth - 1, calls);
                return;
            }
            for (int i = 0; i < calls; i++) {
                fail();
            }
        }

        private void fail() {
            SettableFuture<String> attempt = SettableFuture.create();
            made++;
            Futures.addCallback(
                    retry.hedgeOnly(() -> attempt),
                    new FutureCallback<>() {
                        @Override
                        public void onSuccess(String answer) {}

                        @Override
                        public void onFailure(Throwable failure) {
                            if (CallOutcome.relay(failure).getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                                relayed++;
                            }
                        }
                    },
                    MoreExecutors.directExecutor());
            attempt.setException(SHED);
        }
    }

    /**
     * The bytes {@code calls} allocates per call on {@code allocated}'s count: after a warm-up long
     * enough for the JIT to have compiled the path, the least of a few rounds.
     */
    private static long leastBytesPerCall(LongSupplier allocated, IntConsumer calls) {
        calls.accept(WARM_UP_CHECKOUTS);
        long least = Long.MAX_VALUE;
        for (int round = 0; round < ROUNDS; round++) {
            long before = allocated.getAsLong();
            calls.accept(CHECKOUTS_PER_ROUND);
            least = Math.min(least, (allocated.getAsLong() - before) / CHECKOUTS_PER_ROUND);
        }
        return least;
    }

    /** Prints the count for the benchmarks page, and fails when it is more than 10 % over its budget. */
    private static void assertWithinBudget(String what, long measured, long budgetBytes, String hint) {
        double over = 100.0 * (measured - budgetBytes) / budgetBytes;
        System.out.printf("PerCallCost: %s: %d bytes (budget %d, %+.1f %%)%n", what, measured, budgetBytes, over);
        assertThat(measured)
                .as(
                        "%s: %d bytes, %.1f %% over the budget of %d bytes (per-call-budget.properties); %s",
                        what, measured, over, budgetBytes, hint)
                .isLessThanOrEqualTo((long) (budgetBytes * TOLERANCE));
    }

    /** What serves and calls each hop. */
    private enum Stacks {
        /** Plain grpc-java servers and channels. */
        NONE,
        /** {@link ServerStack} and {@link ChannelStack} with every feature left out. */
        EVERY_FEATURE_LEFT_OUT,
        /** The stacks with every feature a service runs by default. */
        EVERY_DEFAULT_FEATURE
    }

    private static Properties budget() throws IOException {
        Properties budget = new Properties();
        try (InputStream in = PerCallCostTests.class.getResourceAsStream("/per-call-budget.properties")) {
            budget.load(in);
        }
        return budget;
    }

    /** Edge → Pricing → Stock in process, direct executors: a Checkout runs on the caller's thread. */
    private static final class Chain implements AutoCloseable {

        private final List<Server> servers = new ArrayList<>();
        private final List<ManagedChannel> channels = new ArrayList<>();
        private final EdgeGrpc.EdgeBlockingStub edge;

        private final Stacks stacks;

        Chain(Stacks stacks) throws IOException {
            this.stacks = stacks;
            String name = InProcessServerBuilder.generateName();
            serve(name + "-stock", new Stock());
            ManagedChannel toStock = channel(name + "-stock");
            serve(name + "-pricing", new Pricing(StockGrpc.newFutureStub(toStock)));
            ManagedChannel toPricing = channel(name + "-pricing");
            serve(name + "-edge", new Edge(PricingGrpc.newFutureStub(toPricing)));
            ManagedChannel toEdge = InProcessChannelBuilder.forName(name + "-edge")
                    .directExecutor()
                    .build();
            channels.add(toEdge);
            edge = EdgeGrpc.newBlockingStub(toEdge);
        }

        long bytesPerCheckout() {
            CheckoutRequest request = CheckoutRequest.newBuilder().addSkus("a").build();
            return leastBytesPerCall(PerCallCostTests::allocatedBytes, calls -> {
                for (int i = 0; i < calls; i++) {
                    checkout(request);
                }
            });
        }

        private void checkout(CheckoutRequest request) {
            CheckoutReply reply = edge.withDeadlineAfter(2, TimeUnit.SECONDS).checkout(request);
            if (!reply.getLines(0).getAvailable()) {
                throw new AssertionError("a Checkout failed: " + reply);
            }
        }

        private void serve(String name, BindableService service) throws IOException {
            InProcessServerBuilder server = InProcessServerBuilder.forName(name).directExecutor();
            if (stacks == Stacks.EVERY_DEFAULT_FEATURE) {
                ServerStack stack = ServerStack.builder()
                        .warmUp()
                        .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS).build())
                        .admission(AdmissionInterceptors.server(Admission.builder(
                                                AdmissionConfig.builder().build())
                                        .build())
                                .callsDownstream(BudgetRules.DEFAULTS)
                                .build())
                        .inFlight(new InFlightCalls(Set.of()))
                        .build();
                server.addService(stack.intercept(service));
            } else if (stacks == Stacks.EVERY_FEATURE_LEFT_OUT) {
                server.addService(ServerStack.builder()
                        .withoutMalformedRequestGuard()
                        .build()
                        .intercept(service));
            } else {
                server.addService(service);
            }
            servers.add(server.build().start());
        }

        private ManagedChannel channel(String name) {
            InProcessChannelBuilder builder = InProcessChannelBuilder.forTarget("replicas:///" + name)
                    .nameResolverFactory(new OneReplica(name))
                    .directExecutor();
            ManagedChannel channel = stacks == Stacks.EVERY_DEFAULT_FEATURE
                    ? ChannelStack.builder()
                            .retryAttempts()
                            .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                                    .build())
                            .callerForwarding()
                            .readiness(Duration.ofSeconds(5))
                            .cancellations()
                            .serviceConfig(ServiceConfigs.builder().build())
                            .build()
                            .channel(builder)
                    : stacks == Stacks.EVERY_FEATURE_LEFT_OUT
                            ? ChannelStack.builder()
                                    .withoutKeepAlive()
                                    .serviceConfig(ServiceConfigs.roundRobin())
                                    .build()
                                    .channel(builder)
                            : builder.defaultServiceConfig(ServiceConfigs.roundRobin())
                                    .build();
            channels.add(channel);
            return channel;
        }

        @Override
        public void close() throws InterruptedException {
            for (ManagedChannel channel : channels) {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            for (Server server : servers) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** Bytes every live thread of this JVM has allocated so far. */
    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return Arrays.stream(threads.getThreadAllocatedBytes(threads.getAllThreadIds()))
                .filter(bytes -> bytes > 0)
                .sum();
    }

    /** A resolver for one in-process replica, as a Service's DNS name with one pod behind it. */
    private static final class OneReplica extends NameResolverProvider {

        private final String address;

        OneReplica(String address) {
            this.address = address;
        }

        @Override
        public NameResolver newNameResolver(URI target, NameResolver.Args args) {
            return new NameResolver() {
                @Override
                public String getServiceAuthority() {
                    return address;
                }

                @Override
                public void start(Listener2 listener) {
                    listener.onResult(ResolutionResult.newBuilder()
                            .setAddresses(List.of(new EquivalentAddressGroup(new InProcessSocketAddress(address))))
                            .build());
                }

                @Override
                public void shutdown() {}
            };
        }

        @Override
        public String getDefaultScheme() {
            return "replicas";
        }

        @Override
        public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
            return List.of(InProcessSocketAddress.class);
        }

        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return 5;
        }
    }

    private static final class Stock extends StockGrpc.StockImplBase {
        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(7).build());
            responses.onCompleted();
        }
    }

    private static final class Pricing extends PricingGrpc.PricingImplBase {

        private final StockGrpc.StockFutureStub stock;

        Pricing(StockGrpc.StockFutureStub stock) {
            this.stock = stock;
        }

        @Override
        public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
            Futures.addCallback(
                    stock.check(
                            CheckRequest.newBuilder().setSku(request.getSku()).build()),
                    new FutureCallback<>() {
                        @Override
                        public void onSuccess(CheckReply reply) {
                            responses.onNext(QuoteReply.newBuilder()
                                    .setSku(reply.getSku())
                                    .setQty(reply.getQty())
                                    .build());
                            responses.onCompleted();
                        }

                        @Override
                        public void onFailure(Throwable failure) {
                            responses.onError(Status.fromThrowable(failure).asRuntimeException());
                        }
                    },
                    MoreExecutors.directExecutor());
        }
    }

    private static final class Edge extends EdgeGrpc.EdgeImplBase {

        private final PricingGrpc.PricingFutureStub pricing;

        Edge(PricingGrpc.PricingFutureStub pricing) {
            this.pricing = pricing;
        }

        @Override
        public void checkout(CheckoutRequest request, StreamObserver<CheckoutReply> responses) {
            Futures.addCallback(
                    pricing.quote(
                            QuoteRequest.newBuilder().setSku(request.getSkus(0)).build()),
                    new FutureCallback<>() {
                        @Override
                        public void onSuccess(QuoteReply reply) {
                            responses.onNext(CheckoutReply.newBuilder()
                                    .addLines(Line.newBuilder()
                                            .setSku(reply.getSku())
                                            .setAvailable(true))
                                    .build());
                            responses.onCompleted();
                        }

                        @Override
                        public void onFailure(Throwable failure) {
                            responses.onNext(CheckoutReply.newBuilder()
                                    .addLines(Line.newBuilder()
                                            .setSku(request.getSkus(0))
                                            .setAvailable(false))
                                    .build());
                            responses.onCompleted();
                        }
                    },
                    MoreExecutors.directExecutor());
        }
    }
}
