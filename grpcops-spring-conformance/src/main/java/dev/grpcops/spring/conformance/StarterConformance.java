package dev.grpcops.spring.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.RawBytes;
import dev.grpcops.testsupport.OtlpReceiver;
import dev.grpcops.testsupport.OtlpReceiver.ReceivedSpan;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What every grpcops starter owes its users, whichever gRPC integration it is for: extend it in the
 * starter's tests with an application that serves {@link ConformanceServices}' Stock and Pricing its
 * integration's way (Pricing's channel named "stock"), and the properties that serve on a port.
 * It checks the budget served and handed down a hop, health names after the warm-up, a request that
 * does not parse, bad settings refused by name, the drain before stop, the metric names and the
 * library's spans while traces are exported. The
 * same {@code grpcops.*} properties and the same checks run against each starter: a feature that
 * works in one and not the other fails that starter's build.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
public abstract class StarterConformance {

    private static final String WARM_UP = "grpcops.warmup.calls[0].";
    /** The application's name, which its spans carry as their service. */
    private static final String SERVICE = "grpcops-conformance";

    private ConfigurableApplicationContext app;
    private OtlpReceiver traces;
    private ManagedChannel channel;

    /** The application serving {@link ConformanceServices.RecordingStock} and {@link ConformanceServices.ForwardingPricing}. */
    protected abstract Class<?> application();

    /**
     * The integration's properties that serve the application's gRPC server on {@code port}, on
     * loopback, and make its channel named "stock" reach that server.
     */
    protected abstract List<String> serveOn(int port);

    /**
     * The integration's properties that export every trace over OTLP/HTTP to {@code endpoint}
     * within a fraction of a second (the endpoint, a sampling probability of 1, a short export delay).
     */
    protected abstract List<String> exportTracesTo(String endpoint);

    @BeforeAll
    void start() throws IOException {
        int port = freePort();
        traces = new OtlpReceiver(0);
        List<String> more = new ArrayList<>(exportTracesTo(traces.endpoint()));
        more.add(WARM_UP + "method=chain.v1.Stock/Check");
        more.add(WARM_UP + "request={\"sku\":\"w\"}");
        more.add(WARM_UP + "count=20");
        app = start(port, more.toArray(String[]::new));
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .build();
    }

    /** The application under test, started once for every check; for a starter's own checks. */
    protected ConfigurableApplicationContext running() {
        return app;
    }

    /** A plaintext channel to the application's server. */
    protected ManagedChannel channel() {
        return channel;
    }

    @AfterAll
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (app != null) {
            app.close();
        }
        if (traces != null) {
            traces.close();
        }
    }

    private ConfigurableApplicationContext start(int port, String... more) {
        List<String> properties = new ArrayList<>(serveOn(port));
        properties.add("spring.application.name=" + SERVICE);
        properties.add("grpcops.shutdown.drain-delay=300ms");
        properties.addAll(List.of(more));
        return new SpringApplicationBuilder(application())
                .properties(properties.toArray(String[]::new))
                .run();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private ConformanceServices.RecordingStock stock() {
        return app.getBean(ConformanceServices.RecordingStock.class);
    }

    private void awaitServing(ManagedChannel to, String service) {
        HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(to);
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(
                        () -> health.check(HealthCheckRequest.newBuilder()
                                        .setService(service)
                                        .build())
                                .getStatus(),
                        status -> status == ServingStatus.SERVING);
    }

    @Test
    void aCallWithoutDeadlineIsServedUnderTheDefaultBudget() {
        StockGrpc.newBlockingStub(channel)
                .check(CheckRequest.newBuilder().setSku("a").build());

        assertThat(stock().lastRemainingMillis())
                .as("ms left of the 2 s default budget")
                .isBetween(1L, 2_000L);
    }

    @Test
    void aDownstreamCallGetsTheRemainingBudgetLessTheReserve() {
        // The first Quote makes Pricing's channel to Stock and loads its classes: not what is measured.
        PricingGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("warm").build());
        QuoteReply reply = PricingGrpc.newBlockingStub(channel)
                .withDeadlineAfter(1, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("b").build());

        assertThat(reply.getSku()).isEqualTo("b");
        assertThat(stock().lastRemainingMillis())
                .as("ms Stock had of the caller's 1 s less Pricing's 200 ms reserve")
                .isBetween(1L, 800L);
    }

    @Test
    void aTracedCallAndItsDownstreamAttemptAreOneSpanEachWithTheBudget() {
        // A 5 s deadline tells this trace from the other checks' (1 s, or the 2 s default budget).
        PricingGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("traced").build());

        // Three spans, and still three after some more of the exporter's 100 ms batches.
        List<ReceivedSpan> trace = await("the Quote's trace: Pricing served, its Check sent, Stock served")
                .atMost(Duration.ofSeconds(30))
                .during(Duration.ofMillis(600))
                .until(
                        () -> traces.traceServed(SERVICE, "chain.v1.Pricing/Quote", ms -> ms > 4_000),
                        spans -> spans.size() == 3);
        ReceivedSpan quote = OtlpReceiver.one(trace, SERVICE, SpanKind.SPAN_KIND_SERVER, "chain.v1.Pricing/Quote");
        ReceivedSpan attempt = OtlpReceiver.one(trace, SERVICE, SpanKind.SPAN_KIND_CLIENT, "chain.v1.Stock/Check");
        ReceivedSpan check = OtlpReceiver.one(trace, SERVICE, SpanKind.SPAN_KIND_SERVER, "chain.v1.Stock/Check");
        assertThat(trace)
                .as("one span per served call and per attempt, none from the integration's own observations")
                .hasSize(3);
        assertThat(attempt.parentSpanId()).isEqualTo(quote.spanId());
        assertThat(check.parentSpanId()).isEqualTo(attempt.spanId());
        double remaining = OtlpReceiver.ms(quote, "grpcops.budget.remaining_ms");
        assertThat(remaining).isBetween(4_000.0, 5_000.0);
        assertThat(OtlpReceiver.ms(quote, "grpcops.budget.reserve_ms")).isEqualTo(200.0);
        assertThat(OtlpReceiver.ms(attempt, "grpcops.deadline_ms"))
                .as("the deadline handed down: what was left less the reserve")
                .isLessThanOrEqualTo(remaining - 200);
        assertThat(stock().currentTraceId("traced"))
                .as("the trace other instrumentation in Stock's handler joins")
                .isEqualTo(check.traceId());
        assertThat(stock().correlatedTraceId("traced"))
                .as("the trace a log line written in Stock's handler names")
                .isEqualTo(check.traceId());
        assertThat(app.getEnvironment().getProperty("logging.pattern.correlation"))
                .as("log lines written while serving carry the trace and span ids")
                .isEqualTo("%grpcopsCorrelation");
    }

    @Test
    void everyServedServiceIsInHealthAndServingAfterItsWarmUp() {
        awaitServing(channel, StockGrpc.SERVICE_NAME);
        awaitServing(channel, PricingGrpc.SERVICE_NAME);

        MeterRegistry meters = app.getBean(MeterRegistry.class);
        assertThat(meters.get("grpc.server.warmup").gauge().value())
                .as("grpc_server_warmup_seconds: the warm-up ran before SERVING")
                .isGreaterThan(0);
        assertThat(meters.get("grpc.health.serving")
                        .tag("service", StockGrpc.SERVICE_NAME)
                        .gauge()
                        .value())
                .isEqualTo(1);
    }

    @Test
    void theMetricsHaveTheirDocumentedNames() {
        StockGrpc.newBlockingStub(channel)
                .check(CheckRequest.newBuilder().setSku("m").build());
        MeterRegistry meters = app.getBean(MeterRegistry.class);

        assertThat(meters.get("grpc.budget.remaining")
                        .tag("method", "chain.v1.Stock/Check")
                        .timer()
                        .count())
                .isPositive();
        assertThat(meters.get("grpc.budget.default.applied").counter().count()).isPositive();
        assertThat(meters.get("grpc.admission.limit.seats").gauges()).isNotEmpty();
        assertThat(meters.get("grpc.admission.dispatched").functionCounters()).isNotEmpty();
        assertThat(meters.get("grpc.server.calls.in.flight").gauge()).isNotNull();
    }

    @Test
    void aRequestThatDoesNotParseIsInvalidArgumentAndTheServiceKeepsServing() {
        MethodDescriptor<byte[], byte[]> rawCheck = RawBytes.of(StockGrpc.getCheckMethod());
        for (int i = 0; i < 3; i++) {
            StatusRuntimeException refused = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> ClientCalls.blockingUnaryCall(
                            channel, rawCheck, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), new byte[] {
                                (byte) 0xff, (byte) 0xff
                            }));
            assertThat(refused).as("garbage is refused").isNotNull();
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        }

        StockGrpc.newBlockingStub(channel)
                .check(CheckRequest.newBuilder().setSku("after").build());
        assertThat(app.getBean(MeterRegistry.class)
                        .get("grpc.server.malformed.requests")
                        .counter()
                        .count())
                .isGreaterThanOrEqualTo(3);
    }

    @Test
    void aBadSettingStopsTheStartNamingTheProperty() throws IOException {
        for (String[] bad : new String[][] {
            {"grpcops.budget.reserve=-1ms", "grpcops.budget.reserve"},
            {"grpcops.admission.limit=0", "grpcops.admission.limit"},
            {"grpcops.admin.token=changeme", "grpcops.admin.token"}
        }) {
            int port = freePort();
            Throwable failure = catchThrowable(() -> start(port, bad[0]).close());
            assertThat(failure).as(bad[0]).isNotNull();
            Throwable root = failure;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            assertThat(root.getMessage()).as(bad[0]).contains(bad[1]);
        }
    }

    @Test
    void stoppingDrainsAWatcherHearsNotServingBeforeTheServerStops() throws Exception {
        int port = freePort();
        ConfigurableApplicationContext stopping = start(port);
        ManagedChannel to = ManagedChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .build();
        List<ServingStatus> heard = new CopyOnWriteArrayList<>();
        try {
            HealthGrpc.newStub(to)
                    .watch(
                            HealthCheckRequest.newBuilder()
                                    .setService(StockGrpc.SERVICE_NAME)
                                    .build(),
                            new StreamObserver<>() {
                                @Override
                                public void onNext(HealthCheckResponse response) {
                                    heard.add(response.getStatus());
                                }

                                @Override
                                public void onError(Throwable closed) {}

                                @Override
                                public void onCompleted() {}
                            });
            await().atMost(Duration.ofSeconds(60)).until(() -> heard.contains(ServingStatus.SERVING));

            CompletableFuture<Void> closing = CompletableFuture.runAsync(stopping::close);
            await().atMost(Duration.ofSeconds(30)).until(() -> heard.contains(ServingStatus.NOT_SERVING));
            closing.get(30, TimeUnit.SECONDS);

            assertThat(heard.subList(heard.indexOf(ServingStatus.SERVING), heard.size()))
                    .containsSubsequence(ServingStatus.SERVING, ServingStatus.NOT_SERVING);
        } finally {
            to.shutdownNow();
            stopping.close();
        }
    }
}
