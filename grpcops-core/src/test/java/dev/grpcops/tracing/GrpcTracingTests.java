package dev.grpcops.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.testing.InProcessChain;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Spans, parents, attributes and propagation of {@link GrpcTracing} over the in-process chain's hops. */
@Timeout(30)
class GrpcTracingTests {

    private static final String QUOTE = "chain.v1.Pricing/Quote";
    private static final String CHECK = "chain.v1.Stock/Check";

    private static String attribute(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.stringKey(key));
    }

    private static double number(SpanData span, String key) {
        Double value = span.getAttributes().get(AttributeKey.doubleKey(key));
        assertThat(value).as("%s of %s", key, span).isNotNull();
        return value;
    }

    private static final Metadata.Key<String> TRACEPARENT =
            Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);

    /** The spans ended, on an SDK of the test's own (one per chain: closing its provider stops it). */
    private InMemorySpanExporter exporter = InMemorySpanExporter.create();
    /** The span context Pricing's handler ran in, for each Quote traced. */
    private final List<SpanContext> pricingServed = new CopyOnWriteArrayList<>();
    /** The span current in OpenTelemetry's context while Pricing's handler ran, for each Quote. */
    private final List<SpanContext> pricingCurrent = new CopyOnWriteArrayList<>();
    /** Whether Stock's handler ran traced ({@link CallTags#traced}), for each Check. */
    private final List<String> stockTraced = new CopyOnWriteArrayList<>();

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private SdkTracerProvider provider;

    /**
     * The chain traced by {@link GrpcTracing} on {@code sampler}; Pricing's Stock call starts on
     * another thread when {@code fromTimer} (as a hedge does). A Stock SKU named {@code fail} fails
     * with {@code UNAVAILABLE}; {@code hang} never answers.
     */
    private InProcessChain chain(Sampler sampler, boolean fromTimer) throws Exception {
        closeProvider();
        exporter = InMemorySpanExporter.create();
        pricingServed.clear();
        pricingCurrent.clear();
        stockTraced.clear();
        provider = SdkTracerProvider.builder()
                .setSampler(sampler)
                .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                .build();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(provider)
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        InProcessChain.Builder chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .tracing(GrpcTracing.builder(sdk)
                        .budgetRules(BudgetRules.DEFAULTS)
                        .build())
                .pricingOnTransportThreads()
                .onQuote(request -> {
                    SpanContext served = GrpcTracing.currentSpanContext();
                    if (served != null) {
                        pricingServed.add(served);
                    }
                    pricingCurrent.add(Span.current().getSpanContext());
                    CallTags.tag("test.sku", request.getSku());
                })
                .stock((call, request) -> {
                    stockTraced.add(Boolean.toString(CallTags.traced()));
                    return switch (request.getSku()) {
                        case "fail" ->
                            Status.UNAVAILABLE.withDescription("stock is down").asRuntimeException();
                        case "hang" -> InProcessChain.NO_ANSWER;
                        default -> null;
                    };
                });
        if (fromTimer) {
            chain.stockCallsFrom(command -> timer.schedule(command, 1, TimeUnit.MILLISECONDS));
        }
        return chain.build();
    }

    @AfterEach
    void closeProvider() {
        if (provider != null) {
            provider.close();
            provider = null;
        }
    }

    @AfterEach
    void stopTimer() {
        timer.shutdownNow();
    }

    private List<SpanData> spans() {
        return exporter.getFinishedSpanItems();
    }

    /** The ended spans named {@code name}. */
    private List<SpanData> named(String name) {
        return spans().stream().filter(span -> span.getName().equals(name)).toList();
    }

    private SpanData one(String name, SpanKind kind) {
        List<SpanData> found =
                named(name).stream().filter(span -> span.getKind() == kind).toList();
        assertThat(found).as("%s %s in %s", kind, name, spans()).hasSize(1);
        return found.get(0);
    }

    private void awaitSpans(int count) {
        await("%d spans".formatted(count)).atMost(Duration.ofSeconds(10)).until(() -> spans().size() >= count);
    }

    @Test
    void aSampledCallIsOneTraceParentedHopByHopWithTheBudgetOnItsSpans() throws Exception {
        for (boolean fromTimer : new boolean[] {false, true}) {
            try (InProcessChain chain = chain(Sampler.alwaysOn(), fromTimer)) {
                QuoteReply reply = chain.pricing()
                        .withDeadlineAfter(1000, TimeUnit.MILLISECONDS)
                        .quote(QuoteRequest.newBuilder().setSku("a").build());
                assertThat(reply.getQty()).isEqualTo(7);
                awaitSpans(3);

                SpanData served = one(QUOTE, SpanKind.SERVER);
                SpanData attempt = one(CHECK, SpanKind.CLIENT);
                SpanData stock = one(CHECK, SpanKind.SERVER);
                assertThat(served.getParentSpanContext().isValid())
                        .as("the test's call sends no trace context: Pricing starts the trace")
                        .isFalse();
                assertThat(attempt.getParentSpanId())
                        .as("the attempt is the served call's child, started from the timer: " + fromTimer)
                        .isEqualTo(served.getSpanId());
                assertThat(stock.getParentSpanId()).isEqualTo(attempt.getSpanId());
                assertThat(stock.getParentSpanContext().isRemote()).isTrue();
                assertThat(List.of(attempt.getTraceId(), stock.getTraceId())).containsOnly(served.getTraceId());
                assertThat(pricingCurrent)
                        .as("what other instrumentation in Pricing's handler sees: the served call's span")
                        .containsExactly(served.getSpanContext());

                // What arrives of the 1 s is less by the call's way there (on a loaded machine, with
                // classes loading on a first call, a hundred milliseconds or more).
                double remaining = number(served, "grpcops.budget.remaining_ms");
                assertThat(remaining).isBetween(500.0, 1000.0);
                assertThat(number(served, "grpcops.budget.reserve_ms")).isEqualTo(200.0);
                assertThat(served.getAttributes().get(AttributeKey.booleanKey("grpcops.budget.defaulted")))
                        .isFalse();
                assertThat(number(served, "grpcops.admission.wait_ms")).isBetween(0.0, 1000.0);
                // The rest of the hop's ledger line: what it handed down, its handler's time, what was left.
                assertThat(number(served, "grpcops.budget.granted_ms"))
                        .as("the attempt's deadline")
                        .isCloseTo(number(attempt, "grpcops.deadline_ms"), within(20.0));
                double handler = number(served, "grpcops.budget.handler_ms");
                double slack = number(served, "grpcops.budget.slack_ms");
                assertThat(handler).isBetween(0.0, 1000.0);
                assertThat(slack).isBetween(0.0, 1000.0);
                assertThat(remaining - slack)
                        .as("what the hop spent: its wait and its handler")
                        .isCloseTo(number(served, "grpcops.admission.wait_ms") + handler, within(50.0));
                assertThat(attribute(served, "test.sku")).as("CallTags").isEqualTo("a");
                assertThat(number(attempt, "grpcops.deadline_ms"))
                        .as("what was left less the 200 ms reserve, when the call went down")
                        .isBetween(remaining - 200 - 300, remaining - 200 + 1);
                assertThat(attempt.getAttributes().get(AttributeKey.longKey("grpcops.attempt")))
                        .isZero();
                assertThat(attribute(served, "rpc.system")).isEqualTo("grpc");
                assertThat(attribute(served, "rpc.service")).isEqualTo("chain.v1.Pricing");
                assertThat(attribute(served, "rpc.method")).isEqualTo("Quote");
                assertThat(served.getAttributes().get(AttributeKey.longKey("rpc.grpc.status_code")))
                        .isZero();
                assertThat(List.of(
                                served.getStatus().getStatusCode(),
                                attempt.getStatus().getStatusCode()))
                        .containsOnly(StatusCode.UNSET);
                assertThat(stockTraced).containsExactly("true");
            }
        }
    }

    @Test
    void anUnsampledTraceRecordsNothingAndTellsTheNextHopNotToSample() throws Exception {
        try (InProcessChain chain = chain(Sampler.parentBased(Sampler.alwaysOff()), false)) {
            chain.pricing()
                    .withDeadlineAfter(1, TimeUnit.SECONDS)
                    .quote(QuoteRequest.newBuilder().setSku("a").build());
            assertThat(spans()).isEmpty();
            assertThat(stockTraced).containsExactly("false");
            // No attempt span is made: the served call's own context goes down, marked "not sampled".
            SpanContext served = pricingServed.get(0);
            assertThat(served.isValid()).isTrue();
            assertThat(served.isSampled()).isFalse();
            assertThat(pricingCurrent)
                    .as("what other instrumentation in the handler sees: the call's span, not sampled")
                    .containsExactly(served);
            assertThat(chain.stockArrivals.get(0).headers().get(TRACEPARENT))
                    .isEqualTo("00-" + served.getTraceId() + "-" + served.getSpanId() + "-00");
        }
    }

    @Test
    void aServedCallIsTheChildOfTheTraceContextItArrivedWith() throws Exception {
        try (InProcessChain chain = chain(Sampler.parentBased(Sampler.alwaysOff()), false)) {
            Metadata headers = new Metadata();
            String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
            headers.put(TRACEPARENT, "00-" + traceId + "-00f067aa0ba902b7-01");
            chain.pricing()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                    .withDeadlineAfter(1, TimeUnit.SECONDS)
                    .quote(QuoteRequest.newBuilder().setSku("a").build());
            // Sampled upstream: the parent-based sampler follows the caller's decision.
            awaitSpans(3);
            SpanData served = one(QUOTE, SpanKind.SERVER);
            assertThat(served.getTraceId()).isEqualTo(traceId);
            assertThat(served.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
            assertThat(served.getParentSpanContext().isRemote()).isTrue();
        }
    }

    @Test
    void failuresAndCancellationsEndTheSpansWithTheirStatus() throws Exception {
        try (InProcessChain chain = chain(Sampler.alwaysOn(), false)) {
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .quote(QuoteRequest.newBuilder().setSku("fail").build()));
            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            awaitSpans(3);
            for (SpanData span : spans()) {
                assertThat(span.getStatus().getStatusCode()).as(span.toString()).isEqualTo(StatusCode.ERROR);
                assertThat(span.getAttributes().get(AttributeKey.longKey("rpc.grpc.status_code")))
                        .isEqualTo((long) Status.Code.UNAVAILABLE.value());
            }
            assertThat(one(QUOTE, SpanKind.SERVER).getStatus().getDescription())
                    .isEqualTo("UNAVAILABLE: stock is down");

            exporter.reset();
            ListenableFuture<QuoteReply> hanging = chain.pricingFuture()
                    .quote(QuoteRequest.newBuilder().setSku("hang").build());
            await().atMost(Duration.ofSeconds(10)).until(() -> stockTraced.size() == 2);
            hanging.cancel(true);
            // Cancelled by its caller, the served call never closes: its span ends all the same.
            awaitSpans(3);
            assertThat(one(QUOTE, SpanKind.SERVER).getAttributes().get(AttributeKey.longKey("rpc.grpc.status_code")))
                    .isEqualTo((long) Status.Code.CANCELLED.value());
            assertThat(spans()).allSatisfy(span -> assertThat(span.hasEnded()).isTrue());
        }
    }

    @Test
    void healthAndWarmUpCallsAreNotTraced() throws Exception {
        // Parent-based, as Spring Boot samples: the next hop follows the "not sampled" it is handed.
        try (InProcessChain chain = chain(Sampler.parentBased(Sampler.alwaysOn()), false)) {
            chain.pricing()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(InProcessChain.warmUpHeaders()))
                    .withDeadlineAfter(1, TimeUnit.SECONDS)
                    .quote(QuoteRequest.newBuilder().setSku("warm").build());
            assertThat(spans()).isEmpty();
            assertThat(pricingServed).isEmpty();
            assertThat(chain.stockArrivals.get(0).headers().get(TRACEPARENT))
                    .as("downstream: a trace context that says not sampled")
                    .endsWith("-00");
            assertThat(stockTraced).containsExactly("false");
        }
    }
}
