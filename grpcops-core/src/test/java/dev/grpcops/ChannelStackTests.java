package dev.grpcops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.client.BalancingListener;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The channel entry: every layer in {@link ChannelStack.Layer}'s order, per channel where it must be. */
@Timeout(30)
class ChannelStackTests {

    private final BudgetInterceptors budget =
            BudgetInterceptors.builder(BudgetRules.DEFAULTS).build();
    /** The deadline each served call arrived with, in milliseconds left (-1: none). */
    private final List<Long> deadlinesSeen = new ArrayList<>();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    /** Every channel pings by default (10 s, 5 s, also without calls); a stack may say otherwise or none. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"default, 10, 5", "custom, 30, 10", "none, -1, -1"})
    void everyChannelKeepsItsConnectionsAliveByDefault(String setting, long timeSeconds, long timeoutSeconds) {
        ChannelStack.Builder stack = ChannelStack.builder();
        if (setting.equals("custom")) {
            stack.keepAlive(Duration.ofSeconds(30), Duration.ofSeconds(10));
        } else if (setting.equals("none")) {
            stack.withoutKeepAlive();
        }
        java.util.Map<String, Long> set = new java.util.HashMap<>();
        RecordingBuilder recording = new RecordingBuilder(set);
        io.grpc.ManagedChannel channel = stack.build().channel(recording);
        closeables.add(channel::shutdownNow);

        assertThat(set.getOrDefault("time", -1L)).isEqualTo(timeSeconds);
        assertThat(set.getOrDefault("timeout", -1L)).isEqualTo(timeoutSeconds);
        assertThat(set.getOrDefault("without-calls", -1L)).isEqualTo(timeSeconds > 0 ? 1L : -1L);
    }

    /** An in-process channel builder that notes the keepalive it is given. */
    private static final class RecordingBuilder extends io.grpc.ForwardingChannelBuilder2<RecordingBuilder> {

        private final io.grpc.ManagedChannelBuilder<?> delegate =
                io.grpc.inprocess.InProcessChannelBuilder.forName("keep-alive-test");
        private final java.util.Map<String, Long> set;

        RecordingBuilder(java.util.Map<String, Long> set) {
            this.set = set;
        }

        @Override
        protected io.grpc.ManagedChannelBuilder<?> delegate() {
            return delegate;
        }

        @Override
        public RecordingBuilder keepAliveTime(long time, java.util.concurrent.TimeUnit unit) {
            set.put("time", unit.toSeconds(time));
            return this;
        }

        @Override
        public RecordingBuilder keepAliveTimeout(long time, java.util.concurrent.TimeUnit unit) {
            set.put("timeout", unit.toSeconds(time));
            return this;
        }

        @Override
        public RecordingBuilder keepAliveWithoutCalls(boolean enable) {
            set.put("without-calls", enable ? 1L : 0L);
            return this;
        }
    }

    @Test
    void theLayersComeOutermostFirstWhateverOrderTheyAreGivenIn() {
        ChannelStack stack = ChannelStack.builder()
                .balancingListener(BalancingListener.NONE)
                .cancellations()
                .readiness(Duration.ofSeconds(5))
                .callerForwarding()
                .budget(budget)
                .retryAttempts()
                .build();

        assertThat(stack.layers())
                .containsExactly(
                        ChannelStack.Layer.RETRY_ATTEMPTS,
                        ChannelStack.Layer.BUDGET,
                        ChannelStack.Layer.CALLER_FORWARDING,
                        ChannelStack.Layer.READINESS,
                        ChannelStack.Layer.CANCELLATIONS,
                        ChannelStack.Layer.BALANCING_EVENTS);
    }

    @Test
    void aCallMadeWhileServingLeavesWithTheBudgetLessTheReserve() throws Exception {
        String name = serve();
        ManagedChannel channel = channel(everyFeature(), name);
        Budget served = Budget.arrived(Deadline.after(2, TimeUnit.SECONDS), BudgetRules.DEFAULTS);

        Context previous = served.attachTo(Context.current()).attach();
        try {
            WhoAmIGrpc.newBlockingStub(channel).who(WhoRequest.getDefaultInstance());
        } finally {
            Context.current().detach(previous);
        }

        assertThat(deadlinesSeen).hasSize(1);
        assertThat(deadlinesSeen.get(0))
                .as("ms left on arrival: at most 2 s less the reserve (%s)", BudgetRules.DEFAULTS.reserve())
                .isPositive()
                .isLessThanOrEqualTo(2000 - BudgetRules.DEFAULTS.reserve().toMillis());
    }

    @Test
    void aChannelsFirstCallsWaitForItsFirstReplicaWithinTheReadinessWindow() throws Exception {
        String name = InProcessServerBuilder.generateName();
        ManagedChannel waiting = channel(everyFeature(), name);
        ManagedChannel failing = channel(ChannelStack.builder().build(), name);

        ListenableFuture<WhoReply> early = WhoAmIGrpc.newFutureStub(waiting)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .who(WhoRequest.getDefaultInstance());
        assertThatThrownBy(() -> WhoAmIGrpc.newBlockingStub(failing).who(WhoRequest.getDefaultInstance()))
                .as("without the readiness layer, no replica yet fails the call")
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        serve(name);

        assertThat(early.get(10, TimeUnit.SECONDS).getPod()).isEqualTo("p");
    }

    private ChannelStack everyFeature() {
        return ChannelStack.builder()
                .retryAttempts()
                .budget(budget)
                .callerForwarding()
                .readiness(Duration.ofSeconds(20))
                .cancellations()
                .serviceConfig(ServiceConfigs.roundRobin())
                .build();
    }

    private ManagedChannel channel(ChannelStack stack, String name) {
        ManagedChannel channel = stack.channel(InProcessChannelBuilder.forName(name));
        closeables.add(0, () -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return channel;
    }

    private String serve() throws Exception {
        return serve(InProcessServerBuilder.generateName());
    }

    private String serve(String name) throws Exception {
        Server server = InProcessServerBuilder.forName(name)
                .addService(new WhoAmIGrpc.WhoAmIImplBase() {
                    @Override
                    public void who(WhoRequest request, StreamObserver<WhoReply> reply) {
                        Deadline deadline = Context.current().getDeadline();
                        synchronized (deadlinesSeen) {
                            deadlinesSeen.add(deadline == null ? -1 : deadline.timeRemaining(TimeUnit.MILLISECONDS));
                        }
                        reply.onNext(WhoReply.newBuilder().setPod("p").build());
                        reply.onCompleted();
                    }
                })
                .build()
                .start();
        closeables.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return name;
    }
}
