package dev.grpcops.spring.warmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import dev.grpcops.warmup.WarmUp;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.StaticListableBeanFactory;

/** A real server on a loopback port, warmed up through it. */
@Timeout(30)
class WarmUpBeforeServingTests {

    private final AtomicInteger warmUpCalls = new AtomicInteger();
    private final AtomicInteger otherCalls = new AtomicInteger();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private Server server;

    @BeforeEach
    void start() throws Exception {
        server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                // Marshallers replaced, as the malformed-request guard does: the request type comes from the schema.
                .addService(ServerInterceptors.useInputStreamMessages(ServerInterceptors.intercept(
                        new WhoAmIGrpc.WhoAmIImplBase() {
                            @Override
                            public void who(WhoRequest request, StreamObserver<WhoReply> response) {
                                response.onNext(
                                        WhoReply.newBuilder().setPod("p").build());
                                response.onCompleted();
                            }
                        },
                        new CountingWarmUpCalls(),
                        WarmUp.serverInterceptor())))
                .build()
                .start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void servingComesAfterEveryWarmUpCallWasServed() throws Exception {
        WarmUpProperties properties = calls(call("grpcops.v1.WhoAmI/Who", "{}", 500));
        CompletableFuture<Integer> servedWhenServing = new CompletableFuture<>();

        warmUp(properties, true)
                .warmUpThen(server, "*", server.getPort(), () -> servedWhenServing.complete(warmUpCalls.get()));

        assertThat(servedWhenServing.get(20, TimeUnit.SECONDS)).isEqualTo(500);
        assertThat(otherCalls).hasValue(0);
        assertThat(meters.get("grpc.server.warmup").gauge().value()).isPositive();
    }

    @Test
    void withoutCallsServingComesAtOnce() {
        AtomicInteger serving = new AtomicInteger();

        warmUp(new WarmUpProperties(), true).warmUpThen(server, "*", server.getPort(), serving::incrementAndGet);

        assertThat(serving).hasValue(1);
        assertThat(warmUpCalls).hasValue(0);
    }

    @Test
    void switchedOffItSendsNothing() {
        WarmUpProperties properties = calls(call("grpcops.v1.WhoAmI/Who", "{}", 500));
        properties.setEnabled(false);
        AtomicInteger serving = new AtomicInteger();

        warmUp(properties, true).warmUpThen(server, "*", server.getPort(), serving::incrementAndGet);

        assertThat(serving).hasValue(1);
        assertThat(warmUpCalls).hasValue(0);
    }

    @Test
    void overTlsItIsSkippedAndServingStillComes() {
        AtomicInteger serving = new AtomicInteger();

        warmUp(calls(call("grpcops.v1.WhoAmI/Who", "{}", 5)), false)
                .warmUpThen(server, "*", server.getPort(), serving::incrementAndGet);

        assertThat(serving).hasValue(1);
        assertThat(warmUpCalls).hasValue(0);
    }

    @Test
    void anUnknownMethodStopsTheStartNamingThePropertyAndWhatIsServed() {
        WarmUpProperties properties =
                calls(call("grpcops.v1.WhoAmI/Who", "{}", 1), call("chain.v1.Stock/Check", "{}", 1));

        assertThatThrownBy(() -> warmUp(properties, true).warmUpThen(server, "*", server.getPort(), () -> {}))
                .hasMessageContaining("grpcops.warmup.calls[1].method")
                .hasMessageContaining("chain.v1.Stock/Check")
                .hasMessageContaining("grpcops.v1.WhoAmI/Who");
    }

    @Test
    void aCallWithoutMethodStopsTheStartNamingTheProperty() {
        WarmUpProperties properties = calls(call(null, "{}", 1));

        assertThatThrownBy(() -> warmUp(properties, true).warmUpThen(server, "*", server.getPort(), () -> {}))
                .hasMessageContaining("grpcops.warmup.calls[0].method is not set")
                .hasMessageContaining("grpcops.v1.WhoAmI/Who");
    }

    @Test
    void aRequestThatIsNotTheMethodsMessageStopsTheStartNamingTheProperty() {
        WarmUpProperties properties = calls(call("grpcops.v1.WhoAmI/Who", "{\"sku\": \"a\"}", 1));

        assertThatThrownBy(() -> warmUp(properties, true).warmUpThen(server, "*", server.getPort(), () -> {}))
                .hasMessageContaining("grpcops.warmup.calls[0].request")
                .hasMessageContaining("grpcops.v1.WhoRequest");
    }

    @Test
    void aServerBoundToOneAddressIsCalledThere() {
        assertThat(WarmUpBeforeServing.loopbackOr("127.0.0.3")).isEqualTo("127.0.0.3");
        // As Spring gRPC reports it: the bound socket address.
        assertThat(WarmUpBeforeServing.loopbackOr("/127.0.0.3:50051")).isEqualTo("127.0.0.3");
        assertThat(WarmUpBeforeServing.loopbackOr("localhost/127.0.0.3:50051")).isEqualTo("127.0.0.3");
        assertThat(WarmUpBeforeServing.loopbackOr("/[::1]:50051")).isEqualTo("::1");
        for (String wildcard :
                new String[] {"*", "0.0.0.0", "::", "[::]", "", null, "/[0:0:0:0:0:0:0:0]:50051", "/0.0.0.0:50051"}) {
            assertThat(WarmUpBeforeServing.loopbackOr(wildcard)).as(wildcard).isEqualTo("127.0.0.1");
        }
    }

    @Test
    void propertiesRefuseWhatCannotWork() {
        WarmUpProperties properties = new WarmUpProperties();
        assertThatThrownBy(() -> properties.setConcurrency(0)).hasMessageContaining("grpcops.warmup.concurrency");
        assertThatThrownBy(() -> properties.setTimeLimit(java.time.Duration.ZERO))
                .hasMessageContaining("grpcops.warmup.time-limit");
        assertThatThrownBy(() -> properties.setDeadline(java.time.Duration.ofSeconds(-1)))
                .hasMessageContaining("grpcops.warmup.deadline");
        assertThatThrownBy(() -> new WarmUpProperties.Call().setCount(-1))
                .hasMessageContaining("count must not be negative");
    }

    private WarmUpBeforeServing warmUp(WarmUpProperties properties, boolean plaintext) {
        StaticListableBeanFactory beans = new StaticListableBeanFactory();
        beans.addBean("meters", meters);
        ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry =
                beans.getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class);
        return new WarmUpBeforeServing(properties, plaintext, registry);
    }

    private static WarmUpProperties calls(WarmUpProperties.Call... calls) {
        WarmUpProperties properties = new WarmUpProperties();
        properties.setCalls(List.of(calls));
        return properties;
    }

    private static WarmUpProperties.Call call(String method, String request, int count) {
        WarmUpProperties.Call call = new WarmUpProperties.Call();
        call.setMethod(method);
        call.setRequest(request);
        call.setCount(count);
        return call;
    }

    /** Counts calls that carry the warm-up header, and those that do not. */
    private final class CountingWarmUpCalls implements ServerInterceptor {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
            (WarmUp.isWarmUpCall() ? warmUpCalls : otherCalls).incrementAndGet();
            return next.startCall(call, headers);
        }
    }
}
