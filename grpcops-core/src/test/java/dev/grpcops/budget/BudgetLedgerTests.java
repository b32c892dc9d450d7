package dev.grpcops.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.ServerStack;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.InProcessChain;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each hop's ledger line, and the waterfall a caller with the token gets back, over real in-process gRPC (design §19). */
@Timeout(30)
class BudgetLedgerTests {

    private static final String TOKEN = "ledger-test-token-0123456789";

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    private BudgetInterceptors budget() {
        return BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                .ledgerToken(TOKEN)
                .build();
    }

    private ManagedChannel channel(String name) {
        ManagedChannel channel =
                InProcessChannelBuilder.forName(name).directExecutor().build();
        closeables.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return channel;
    }

    private void serve(String name, io.grpc.ServerServiceDefinition service) throws Exception {
        Server server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(service)
                .build()
                .start();
        closeables.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    }

    /** The chain in process, every hop's ledger passed back for {@link #TOKEN}; Pricing makes {@code checks} per Quote. */
    private InProcessChain chain(int checks) throws Exception {
        InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .ledgerToken(TOKEN)
                .checksPerQuote(checks)
                .build();
        closeables.add(chain);
        return chain;
    }

    /** Each hop's ledger line, as it answered (Pricing's and Stock's). */
    private static List<LedgerLine> answered(InProcessChain chain) {
        List<LedgerLine> lines = new ArrayList<>(chain.pricingListener.answered);
        lines.addAll(chain.stockListener.answered);
        return lines;
    }

    /** One Quote with a 2 s deadline, {@code ledgerHeader} as the ask (null: none); the trailers it got. */
    private static Metadata quote(InProcessChain chain, String ledgerHeader) {
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        Metadata headers = new Metadata();
        if (ledgerHeader != null) {
            headers.put(LedgerLine.KEY, ledgerHeader);
        }
        chain.pricing()
                .withInterceptors(
                        MetadataUtils.newAttachHeadersInterceptor(headers),
                        MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("a").build());
        return trailers.get();
    }

    private static List<LedgerLine> ledger(Metadata trailers) {
        Iterable<String> values = trailers.getAll(LedgerLine.KEY);
        List<LedgerLine> lines = new ArrayList<>();
        if (values != null) {
            values.forEach(value -> LedgerLine.parse(value).ifPresent(lines::add));
        }
        return lines;
    }

    @Test
    void aCallerWithTheTokenGetsEveryHopsLineOutermostFirst() throws Exception {
        List<LedgerLine> lines = ledger(quote(chain(1), TOKEN));

        assertThat(lines).extracting(LedgerLine::hop).containsExactly("chain.v1.Pricing", "chain.v1.Stock");
        assertThat(lines).extracting(LedgerLine::depth).containsExactly(0, 1);
        LedgerLine front = lines.get(0);
        LedgerLine back = lines.get(1);
        assertThat(front.received()).isBetween(Duration.ofMillis(1_500), Duration.ofSeconds(2));
        assertThat(front.defaulted()).isFalse();
        assertThat(front.granted())
                .as("Pricing handed Stock its budget less the reserve")
                .isLessThanOrEqualTo(front.received().minus(BudgetRules.DEFAULTS.reserve()))
                .isPositive();
        assertThat(back.received()).as("Stock received what Pricing granted").isLessThanOrEqualTo(front.granted());
        assertThat(back.granted()).as("Stock called nobody").isZero();
        assertThat(front.slack()).isPositive().isLessThan(front.received());
        assertThat(front.queued()).as("no admission: no wait").isLessThan(Duration.ofMillis(100));
        assertThat(front.handler()).isLessThanOrEqualTo(front.received().minus(front.slack()));
    }

    /** A hop that fans out wide passes back two dozen of its calls' lines and counts the rest: the call does not fail for its ledger. */
    @Test
    void aWideFanOutPassesBackTwoDozenLinesAndCountsTheRest() throws Exception {
        Metadata trailers = quote(chain(100), TOKEN);

        assertThat(ledger(trailers)).hasSize(1 + 24);
        assertThat(trailers.getAll(LedgerLine.KEY))
                .filteredOn(value -> LedgerLine.omittedIn(value) > 0)
                .singleElement()
                .isEqualTo(LedgerLine.OMITTED + 76);
    }

    @Test
    void withoutTheTokenNoLedgerLeavesButEveryHopCountsItsSlack() throws Exception {
        InProcessChain chain = chain(1);

        assertThat(ledger(quote(chain, null))).as("not asked").isEmpty();
        assertThat(ledger(quote(chain, "a-wrong-token-0123456789")))
                .as("a wrong token")
                .isEmpty();
        assertThat(answered(chain))
                .extracting(LedgerLine::hop)
                .containsExactlyInAnyOrder("chain.v1.Stock", "chain.v1.Pricing", "chain.v1.Stock", "chain.v1.Pricing");
        assertThat(answered(chain)).allSatisfy(line -> assertThat(line.slack()).isPositive());
    }

    @Test
    void theWaitForASeatIsCountedAsQueued() throws Exception {
        BlockingQueue<StreamObserver<CheckReply>> held = new LinkedBlockingQueue<>();
        Admission admission = Admission.builder(AdmissionConfig.builder()
                        .limit(1)
                        .levels(List.of(PriorityLevelConfig.of("default", 1)))
                        .build())
                .build();
        ServerStack stack = ServerStack.builder()
                .budget(budget())
                .admission(AdmissionInterceptors.server(admission).build())
                .build();
        String name = InProcessServerBuilder.generateName();
        serve(
                name,
                stack.intercept(
                        new StockGrpc.StockImplBase() {
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                                held.add(reply);
                            }
                        }.bindService()));
        ManagedChannel channel = channel(name);
        Metadata asking = new Metadata();
        asking.put(LedgerLine.KEY, TOKEN);
        var first = StockGrpc.newFutureStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(CheckRequest.getDefaultInstance());
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        var second = StockGrpc.newFutureStub(channel)
                .withInterceptors(
                        MetadataUtils.newAttachHeadersInterceptor(asking),
                        MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(CheckRequest.getDefaultInstance());
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> admission.level("default").inQueue() == 1);
        long queuedFrom = System.nanoTime();
        StreamObserver<CheckReply> seat = held.poll(10, TimeUnit.SECONDS);
        long waitedAtLeast = System.nanoTime() - queuedFrom;
        seat.onNext(CheckReply.getDefaultInstance());
        seat.onCompleted();
        first.get(5, TimeUnit.SECONDS);
        StreamObserver<CheckReply> next = held.poll(10, TimeUnit.SECONDS);
        next.onNext(CheckReply.getDefaultInstance());
        next.onCompleted();
        second.get(5, TimeUnit.SECONDS);

        LedgerLine line = ledger(trailers.get()).get(0);
        assertThat(line.queued()).isPositive().isGreaterThanOrEqualTo(Duration.ofNanos(waitedAtLeast));
    }

    @Test
    void aLineSurvivesItsTrailerAndAnythingElseIsNotALine() {
        LedgerLine line = LedgerLine.builder("chain.v1.Edge")
                .depth(0)
                .received(Duration.ofMillis(1000))
                .defaulted(true)
                .queued(Duration.ofNanos(1_250_000))
                .handler(Duration.ofMillis(42))
                .granted(Duration.ofMillis(800))
                .slack(Duration.ofMillis(-3))
                .build();

        assertThat(LedgerLine.parse(line.toHeaderValue())).contains(line);
        assertThat(LedgerLine.parse(line.toHeaderValue()).orElseThrow().deeper().depth())
                .isEqualTo(1);
        assertThat(LedgerLine.parse("hop=x;received_ms=abc")).isEmpty();
        assertThat(LedgerLine.parse("no fields")).isEmpty();
        assertThat(LedgerLine.parse(null)).isEmpty();
    }

    /** What a peer sends is read, never thrown on: a value that is not a line is left out. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {
                "hop=a=b;received_ms=1",
                "hop=;received_ms=1",
                "hop=x;depth=99999999999",
                "hop=x;received_ms=1e300",
                "hop=x;received_ms=NaN",
                "hop=x;slack_ms=-Infinity",
                "=;=;=",
                "omitted=99999999999",
            })
    void nothingAPeerSendsMakesReadingALineThrow(String value) {
        assertThat(LedgerLine.parse(value)).isEmpty();
        assertThat(LedgerLine.omittedIn(value)).isZero();
    }

    @Test
    void aValueOrAHopTooLongIsNoLine() {
        String longHop = "h".repeat(LedgerLine.MAX_HOP_LENGTH + 1);
        assertThat(LedgerLine.parse("hop=" + longHop + ";received_ms=1")).isEmpty();
        assertThat(LedgerLine.parse("hop=x;received_ms=1;pad=" + "p".repeat(600)))
                .isEmpty();
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> LedgerLine.builder(longHop)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1-" + LedgerLine.MAX_HOP_LENGTH);
    }

    /**
     * A downstream hop returns lines that are not lines (a hop name with '=', an oversized value):
     * they are left out, and the call upstream ends as it would have, its ledger with its own line.
     */
    @Test
    void linesADownstreamHopMangledAreLeftOutAndTheCallStillEnds() throws Exception {
        String stockName = InProcessServerBuilder.generateName();
        serve(
                stockName,
                io.grpc.ServerInterceptors.intercept(
                        new StockGrpc.StockImplBase() {
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                                reply.onNext(CheckReply.newBuilder().setQty(3).build());
                                reply.onCompleted();
                            }
                        },
                        new io.grpc.ServerInterceptor() {
                            @Override
                            public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(
                                    io.grpc.ServerCall<Q, R> call,
                                    Metadata headers,
                                    io.grpc.ServerCallHandler<Q, R> next) {
                                return next.startCall(
                                        new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                                            @Override
                                            public void close(io.grpc.Status status, Metadata trailers) {
                                                trailers.put(LedgerLine.KEY, "hop=a=b;received_ms=1");
                                                trailers.put(LedgerLine.KEY, "hop=" + "x".repeat(300));
                                                trailers.put(LedgerLine.KEY, "omitted=NaN");
                                                super.close(status, trailers);
                                            }
                                        },
                                        headers);
                            }
                        }));
        BudgetInterceptors budget = budget();
        ManagedChannel stock = InProcessChannelBuilder.forName(stockName)
                .directExecutor()
                .intercept(budget.client())
                .build();
        closeables.add(() -> stock.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        String frontName = InProcessServerBuilder.generateName();
        serve(
                frontName,
                io.grpc.ServerInterceptors.intercept(
                        new StockGrpc.StockImplBase() {
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                                reply.onNext(StockGrpc.newBlockingStub(stock).check(request));
                                reply.onCompleted();
                            }
                        },
                        budget.server()));
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        Metadata asking = new Metadata();
        asking.put(LedgerLine.KEY, TOKEN);
        CheckReply reply = StockGrpc.newBlockingStub(channel(frontName))
                .withInterceptors(
                        MetadataUtils.newAttachHeadersInterceptor(asking),
                        MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(CheckRequest.getDefaultInstance());

        assertThat(reply.getQty()).isEqualTo(3);
        assertThat(ledger(trailers.get())).extracting(LedgerLine::hop).containsExactly("chain.v1.Stock");
    }

    /**
     * Wrong ledger tokens are limited per caller address, as refused admin calls are: past five in
     * ten seconds the address is not even compared, so it learns nothing from the trailers, the
     * right token included. Its calls are served all the same.
     */
    @Test
    void anAddressThatGuessedTooOftenGetsNoLedgerAndLearnsNothing() throws Exception {
        InProcessChain chain = chain(1);
        for (int i = 0; i < 5; i++) {
            assertThat(ledger(quote(chain, "a-wrong-token-01234567" + i))).isEmpty();
        }
        assertThat(ledger(quote(chain, TOKEN)))
                .as("the right token, from an address locked out")
                .isEmpty();
        assertThat(chain.stockCalls()).as("every call served").isEqualTo(6);
    }

    @Test
    void aLedgerTokenThatIsNoSecretIsRefused() {
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                        .ledgerToken("changeme")
                        .build()))
                .isInstanceOf(dev.grpcops.admin.AdminTokens.UnusableAdminTokenException.class)
                .hasMessageContaining("the ledger token");
    }
}
