package com.example.plaingreeter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.plaingreeter.v1.GreetReply;
import com.example.plaingreeter.v1.GreetRequest;
import com.example.plaingreeter.v1.GreeterGrpc;
import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.client.BalancingListener;
import dev.grpcops.proto.fault.v1.FaultSpec;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.retry.RetryOutcome;
import dev.grpcops.warmup.WarmUpResult;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The plain example over loopback, as its user would call it: each feature seen from the caller. */
@Timeout(60)
class PlainGreeterTests {

    private static final String ADMIN_TOKEN = "plain-greeter-test-admin-token";

    /** Every span the example's servers and clients end, as an exporter would get them. */
    private final InMemorySpanExporter spans = InMemorySpanExporter.create();

    private final Map<RetryOutcome, AtomicInteger> retries = new ConcurrentHashMap<>();
    private final RetryListener retryCounts = new RetryListener() {
        @Override
        public void outcome(String target, RetryOutcome outcome) {
            retries.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
        }
    };

    private OpenTelemetrySdk openTelemetry;
    private final List<PlainGreeterServer> servers = new ArrayList<>();
    private final List<GreeterClient> clients = new ArrayList<>();

    @BeforeEach
    void tracing() {
        openTelemetry = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(spans))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        for (GreeterClient client : clients) {
            client.close();
        }
        for (PlainGreeterServer server : servers) {
            server.stopNow();
        }
        openTelemetry.close();
    }

    @Test
    void theServerSaysServingOnlyOnceItsWarmUpIsDoneAndTracesNoneOfIt() throws Exception {
        PlainGreeterServer server =
                PlainGreeterServer.start(new InetSocketAddress("127.0.0.1", 0), ADMIN_TOKEN, openTelemetry);
        servers.add(server);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                .usePlaintext()
                .build();
        try {
            // What a health-checking client sees from the start, until SERVING.
            List<ServingStatus> seen = new ArrayList<>();
            boolean warmedUpWhenServing = false;
            Iterator<HealthCheckResponse> watch = HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .watch(HealthCheckRequest.getDefaultInstance());
            while (!seen.contains(ServingStatus.SERVING)) {
                seen.add(watch.next().getStatus());
                warmedUpWhenServing = server.warmedUp().isDone();
            }
            assertThat(warmedUpWhenServing).as("the warm-up done when SERVING came, after %s", seen).isTrue();
        } finally {
            channel.shutdownNow();
        }

        WarmUpResult warmUp = server.warmedUp().get(30, TimeUnit.SECONDS);
        assertThat(warmUp.statuses()).containsEntry(Status.Code.OK, 500L);
        assertThat(spans.getFinishedSpanItems()).as("spans of the warm-up's 500 calls").isEmpty();
    }

    @Test
    void aCallArrivesWithItsDeadlineAsItsBudget() throws Exception {
        GreeterClient client = client(server());

        GreetReply reply = GreeterGrpc.newBlockingStub(client.channel())
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .greet(GreetRequest.newBuilder().setName("plain").build());

        assertThat(reply.getMessage()).isEqualTo("Hello, plain");
        assertThat(reply.getDefaultBudget()).isFalse();
        assertThat(reply.getBudgetRemainingMs()).isBetween(1L, 2000L);
        assertThat(reply.getDownstreamDeadlineMs()).isLessThan(reply.getBudgetRemainingMs());
    }

    @Test
    void aCallWithoutADeadlineGetsTheDefaultBudget() throws Exception {
        GreeterClient client = client(server());

        GreetReply reply = GreeterGrpc.newBlockingStub(client.channel())
                .greet(GreetRequest.newBuilder().setName("plain").build());

        assertThat(reply.getDefaultBudget()).isTrue();
    }

    @Test
    void settingFaultsWithoutTheAdminTokenIsRefused() throws Exception {
        GreeterClient client = client(server());

        assertThatThrownBy(() -> FaultsGrpc.newBlockingStub(client.channel()).set(FaultSpec.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(
                                e.getStatus().getCode())
                        .isEqualTo(Status.Code.UNAUTHENTICATED));
    }

    @Test
    void aReplicaThatAnswersUnavailableCostsTheCallerNothing() throws Exception {
        PlainGreeterServer healthy = server();
        PlainGreeterServer down = server();
        ManagedChannel toDown = NettyChannelBuilder.forAddress("127.0.0.1", down.port())
                .usePlaintext()
                .build();
        try {
            FaultsGrpc.newBlockingStub(toDown)
                    .withInterceptors(AdminCredentials.bearer(ADMIN_TOKEN))
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .set(FaultSpec.newBuilder()
                            .setErrorRatio(1)
                            .setErrorCode("UNAVAILABLE")
                            .build());
        } finally {
            toDown.shutdownNow();
        }
        GreeterClient client = client(healthy, down);

        // One after another until the failing replica has taken some: it is in the pick once it is
        // connected (its slow start gives it a share from the start), and each of its answers is retried.
        int greeted = 0;
        while (retries.get(RetryOutcome.ATTEMPTED) == null && greeted < 2000) {
            GreetReply reply = client.greet(GreetRequest.newBuilder().setName("caller " + greeted).build())
                    .get(10, TimeUnit.SECONDS);
            assertThat(reply.getMessage()).isEqualTo("Hello, caller " + greeted);
            greeted++;
        }

        assertThat(retries.get(RetryOutcome.ATTEMPTED))
                .as("retries sent to the other replica, in %d Greets that all succeeded", greeted)
                .isNotNull()
                .hasPositiveValue();
    }

    @Test
    void aCallIsOneTraceFromTheCallersAttemptToTheHandlerWithItsBudget() throws Exception {
        GreeterClient client = client(server());

        client.greet(GreetRequest.newBuilder().setName("traced").build()).get(10, TimeUnit.SECONDS);

        SpanData attempt = spans.getFinishedSpanItems().stream()
                .filter(span -> span.getKind() == SpanKind.CLIENT)
                .findFirst()
                .orElseThrow();
        assertThat(attempt.getName()).isEqualTo("greeter.v1.Greeter/Greet");
        assertThat(attempt.getAttributes().get(AttributeKey.doubleKey("grpcops.deadline_ms")))
                .isPositive();
        SpanData served = spans.getFinishedSpanItems().stream()
                .filter(span -> span.getKind() == SpanKind.SERVER)
                .findFirst()
                .orElseThrow();
        assertThat(served.getTraceId()).isEqualTo(attempt.getTraceId());
        assertThat(served.getParentSpanId()).isEqualTo(attempt.getSpanId());
        assertThat(served.getAttributes().get(AttributeKey.doubleKey("grpcops.budget.remaining_ms")))
                .isPositive();
    }

    /** A replica, SERVING (its warm-up done). */
    private PlainGreeterServer server() throws Exception {
        PlainGreeterServer server =
                PlainGreeterServer.start(new InetSocketAddress("127.0.0.1", 0), ADMIN_TOKEN, openTelemetry);
        servers.add(server);
        server.warmedUp().get(30, TimeUnit.SECONDS);
        return server;
    }

    private GreeterClient client(PlainGreeterServer... replicas) {
        StringBuilder target = new StringBuilder("list:///");
        for (PlainGreeterServer replica : replicas) {
            target.append(target.length() > 8 ? "," : "").append("127.0.0.1:").append(replica.port());
        }
        GreeterClient client = new GreeterClient(target.toString(), openTelemetry, BalancingListener.NONE, retryCounts);
        clients.add(client);
        return client;
    }
}
