package dev.grpcops.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.RawBytes;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class MalformedRequestsTests {

    /** The bytes of a request, sent as they are: what a broken or hostile client sends. */
    private static final MethodDescriptor<byte[], byte[]> RAW_CHECK = RawBytes.of(StockGrpc.getCheckMethod());

    private final AtomicInteger handled = new AtomicInteger();
    private final List<String> malformed = new CopyOnWriteArrayList<>();
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .addService(MalformedRequests.guard(
                        new CountingStock().bindService(), (method, failure) -> malformed.add(method)))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void undecodableRequestIsInvalidArgumentAndNeverReachesTheHandler() {
        // Field 1 (sku, length-delimited) claims 127 bytes and brings 2.
        byte[] garbage = {0x0a, 0x7f, 0x41, 0x42};
        StatusRuntimeException refused = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> ClientCalls.blockingUnaryCall(
                        channel, RAW_CHECK, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), garbage));

        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(refused.getStatus().getDescription())
                .isEqualTo("request is not a valid chain.v1.Stock/Check request: it does not parse");
        assertThat(malformed).containsExactly("chain.v1.Stock/Check");
        assertThat(handled).hasValue(0);
    }

    /**
     * What the guard saves a caller from: without it grpc-java fails the call UNKNOWN "Application
     * error processing RPC" (the parse failure escapes its listener, which ends the call so), not
     * INVALID_ARGUMENT, and the caller cannot tell its own mistake from a server bug.
     */
    @Test
    void withoutTheGuardGrpcJavaFailsAnUndecodableRequestUnknown() throws Exception {
        String name = InProcessServerBuilder.generateName();
        Server unguarded = InProcessServerBuilder.forName(name)
                .addService(new CountingStock().bindService())
                .build()
                .start();
        ManagedChannel toUnguarded = InProcessChannelBuilder.forName(name).build();
        try {
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> ClientCalls.blockingUnaryCall(
                            toUnguarded,
                            RAW_CHECK,
                            CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                            new byte[] {0x0a, 0x7f, 0x41, 0x42}));
            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
            assertThat(failed.getStatus().getDescription()).isEqualTo("Application error processing RPC");
            assertThat(handled).hasValue(0);
        } finally {
            toUnguarded.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            unguarded.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void theServiceKeepsServingAfterGarbage() {
        for (int i = 0; i < 50; i++) {
            assertThat(catchThrowableOfType(
                            StatusRuntimeException.class,
                            () -> ClientCalls.blockingUnaryCall(
                                    channel,
                                    RAW_CHECK,
                                    CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                                    new byte[] {(byte) 0xff, (byte) 0xff})))
                    .as("garbage is refused")
                    .isNotNull();
        }
        CheckReply reply = StockGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku("ab").build());

        assertThat(reply.getQty()).isEqualTo(7);
        assertThat(malformed).hasSize(50);
        assertThat(handled).hasValue(1);
    }

    @Test
    void theHandlerAndInterceptorsSeeTheServiceOwnMethodDescriptor() {
        assertThat(StockGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("x").build())
                        .getSku())
                .isEqualTo("x");
        assertThat(server.getServices())
                .singleElement()
                .satisfies(service -> assertThat(
                                service.getMethod(StockGrpc.getCheckMethod().getFullMethodName())
                                        .getMethodDescriptor()
                                        .getSchemaDescriptor())
                        .as("reflection still finds the proto descriptors")
                        .isNotNull());
    }

    /** Server reflection describes a service from its schema: the guarded definition keeps it. */
    @Test
    void theGuardedServiceKeepsItsSchemaForReflection() {
        var guarded = MalformedRequests.guard(new CountingStock().bindService(), (method, failure) -> {});

        assertThat(guarded.getServiceDescriptor().getSchemaDescriptor())
                .isNotNull()
                .isSameAs(StockGrpc.getServiceDescriptor().getSchemaDescriptor());
        assertThat(guarded.getServiceDescriptor().getMethods())
                .hasSize(StockGrpc.getServiceDescriptor().getMethods().size());
    }

    private final class CountingStock extends StockGrpc.StockImplBase {

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            handled.incrementAndGet();
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(7).build());
            responses.onCompleted();
        }
    }
}
