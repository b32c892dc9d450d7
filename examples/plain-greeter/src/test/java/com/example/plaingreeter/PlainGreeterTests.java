package com.example.plaingreeter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.plaingreeter.v1.GreetReply;
import com.example.plaingreeter.v1.GreetRequest;
import com.example.plaingreeter.v1.GreeterGrpc;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.proto.fault.v1.FaultSpec;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The plain example over loopback, as its user would call it: each feature seen from the caller. */
@Timeout(60)
class PlainGreeterTests {

    private PlainGreeterServer server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        server = PlainGreeterServer.start(new InetSocketAddress("127.0.0.1", 0), "plain-greeter-test-admin-token");
        channel = GreeterClient.channel("list:///127.0.0.1:" + server.port());
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.stopNow();
    }

    @Test
    void aCallArrivesWithItsDeadlineAsItsBudget() {
        GreetReply reply = GreeterGrpc.newBlockingStub(channel)
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .greet(GreetRequest.newBuilder().setName("plain").build());

        assertThat(reply.getMessage()).isEqualTo("Hello, plain");
        assertThat(reply.getDefaultBudget()).isFalse();
        assertThat(reply.getBudgetRemainingMs()).isBetween(1L, 2000L);
        assertThat(reply.getDownstreamDeadlineMs()).isLessThan(reply.getBudgetRemainingMs());
    }

    @Test
    void aCallWithoutADeadlineGetsTheDefaultBudget() {
        GreetReply reply = GreeterGrpc.newBlockingStub(channel).greet(GreetRequest.newBuilder().setName("plain").build());

        assertThat(reply.getDefaultBudget()).isTrue();
    }

    @Test
    void settingFaultsWithoutTheAdminTokenIsRefused() {
        assertThatThrownBy(() -> FaultsGrpc.newBlockingStub(channel).set(FaultSpec.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(
                                e.getStatus().getCode())
                        .isEqualTo(Status.Code.UNAUTHENTICATED));
    }
}
