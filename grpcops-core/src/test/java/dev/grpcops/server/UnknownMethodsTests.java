package dev.grpcops.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class UnknownMethodsTests {

    private final AtomicInteger unknown = new AtomicInteger();
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void madeUpMethodsAreUnimplementedAndCountedWithoutTheirNames() throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                        responses.onNext(
                                CheckReply.newBuilder().setSku(request.getSku()).build());
                        responses.onCompleted();
                    }
                })
                .fallbackHandlerRegistry(new UnknownMethods(unknown::incrementAndGet))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).build();

        for (int i = 0; i < 200; i++) {
            MethodDescriptor<CheckRequest, CheckReply> madeUp = StockGrpc.getCheckMethod().toBuilder()
                    .setFullMethodName("made.up.Service" + i + "/Method" + i)
                    .build();
            StatusRuntimeException refused = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> ClientCalls.blockingUnaryCall(
                            channel,
                            madeUp,
                            CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                            CheckRequest.getDefaultInstance()));
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
        }

        assertThat(unknown).hasValue(200);
        assertThat(StockGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("a").build())
                        .getSku())
                .isEqualTo("a");
        assertThat(unknown).as("served methods are not unknown").hasValue(200);
    }
}
