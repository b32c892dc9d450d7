package dev.grpcops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.CallWidth;
import dev.grpcops.admission.Criticality;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.Faults;
import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import dev.grpcops.shutdown.InFlightCalls;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The server entry: every layer in {@link ServerStack.Layer}'s order, as a call meets them. */
@Timeout(30)
class ServerStackTests {

    private static final String TOKEN = "server-stack-test-admin-token";

    private final InFlightCalls inFlight = new InFlightCalls(Set.of());
    private final FaultInjection faults = FaultInjection.builder().build();
    /** What the handler saw of the layers outside it, one line per served call. */
    private final List<String> seenByHandler = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** When set, the next Who call is answered only once it is counted down. */
    private final AtomicReference<CountDownLatch> holdWho = new AtomicReference<>();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    @Test
    void theLayersComeOutermostFirstWhateverOrderTheyAreGivenIn() {
        ServerStack stack = ServerStack.builder()
                .inFlight(inFlight)
                .faults(faults)
                .admission(admission())
                .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS).build())
                .warmUp()
                .adminAuthorization(admin())
                .build();

        assertThat(stack.layers())
                .containsExactly(
                        ServerStack.Layer.ADMIN_AUTHORIZATION,
                        ServerStack.Layer.WARM_UP,
                        ServerStack.Layer.BUDGET,
                        ServerStack.Layer.ADMISSION,
                        ServerStack.Layer.FAULTS,
                        ServerStack.Layer.IN_FLIGHT);
        assertThat(stack.interceptorsOutermostFirst()).hasSize(6).last().isSameAs(inFlight);
    }

    @Test
    void aStackWithoutFeaturesServesCallsUntouched() throws Exception {
        ManagedChannel channel = serve(ServerStack.builder().build());

        WhoReply reply = WhoAmIGrpc.newBlockingStub(channel).who(WhoRequest.getDefaultInstance());

        assertThat(reply.getPod()).isEqualTo("p");
        assertThat(seenByHandler).containsExactly("budget=false in-flight=0");
    }

    @Test
    void theHandlerRunsInsideTheBudgetAndIsCountedInFlight() throws Exception {
        ManagedChannel channel = serve(everyFeature());

        WhoAmIGrpc.newBlockingStub(channel).who(WhoRequest.getDefaultInstance());

        assertThat(seenByHandler).containsExactly("budget=true in-flight=1");
        assertThat(inFlight.count()).isZero();
    }

    @Test
    void anAdminCallWithoutTheTokenIsRefusedBeforeAnyFaultIsInjected() throws Exception {
        faults.set(Faults.builder()
                .errorRatio(1.0)
                .errorCode(Status.Code.UNAVAILABLE)
                .build());
        ManagedChannel channel = serve(everyFeature());

        assertThatThrownBy(() -> WhoAmIGrpc.newBlockingStub(channel).drain(DrainRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        assertThatThrownBy(() -> WhoAmIGrpc.newBlockingStub(channel).who(WhoRequest.getDefaultInstance()))
                .as("a normal call meets the fault")
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(seenByHandler).isEmpty();
    }

    /** One seat and no queue: a second call is shed, the operator's admin call is not. */
    @Test
    void theAdminMethodsAreNeverShedByAdmission() throws Exception {
        List<PriorityLevelConfig> levels = new ArrayList<>();
        for (Criticality criticality : Criticality.values()) {
            levels.add(
                    PriorityLevelConfig.builder(criticality.value()).queues(0).build());
        }
        ServerStack stack = ServerStack.builder()
                .adminAuthorization(admin())
                .admission(AdmissionInterceptors.server(Admission.builder(AdmissionConfig.builder()
                                        .limit(3)
                                        .levels(levels)
                                        .build())
                                .build())
                        .build())
                .build();
        ManagedChannel channel = serve(stack);
        CountDownLatch release = new CountDownLatch(1);
        holdWho.set(release);
        ListenableFuture<WhoReply> held = WhoAmIGrpc.newFutureStub(channel).who(WhoRequest.getDefaultInstance());

        assertThatThrownBy(() -> WhoAmIGrpc.newBlockingStub(channel).who(WhoRequest.getDefaultInstance()))
                .as("the seat is taken and there is no queue")
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
        WhoAmIGrpc.newBlockingStub(channel)
                .withInterceptors(AdminCredentials.bearer(TOKEN))
                .drain(DrainRequest.getDefaultInstance());
        assertThat(seenByHandler).contains("drain");

        release.countDown();
        assertThat(held.get(5, TimeUnit.SECONDS).getPod()).isEqualTo("p");
    }

    /** The layers see typed requests: admission reads a held call's width (3 seats) from its request. */
    @Test
    void admissionReadsACallsWidthFromItsRequest() throws Exception {
        List<PriorityLevelConfig> levels = new ArrayList<>();
        for (Criticality criticality : Criticality.values()) {
            levels.add(PriorityLevelConfig.of(criticality.value(), 1));
        }
        Admission admission = Admission.builder(
                        AdmissionConfig.builder().limit(30).levels(levels).build())
                .build();
        ServerStack stack = ServerStack.builder()
                .admission(AdmissionInterceptors.server(admission)
                        .width(CallWidth.of(WhoAmIGrpc.getWhoMethod(), request -> 3 + request.getSerializedSize()))
                        .build())
                .build();
        ManagedChannel channel = serve(stack);
        CountDownLatch release = new CountDownLatch(1);
        holdWho.set(release);
        ListenableFuture<WhoReply> held = WhoAmIGrpc.newFutureStub(channel).who(WhoRequest.getDefaultInstance());
        await().atMost(Duration.ofSeconds(5)).until(() -> seenByHandler.size() == 1);

        assertThat(admission.levels().stream()
                        .mapToInt(Admission.Level::executingSeats)
                        .sum())
                .as("seats the held call takes")
                .isEqualTo(3);
        release.countDown();
        assertThat(held.get(5, TimeUnit.SECONDS).getPod()).isEqualTo("p");
    }

    @Test
    void aMalformedRequestIsAnsweredInvalidArgumentAndTheServiceKeepsServing() throws Exception {
        ManagedChannel channel = serve(everyFeature());
        MethodDescriptor<InputStream, WhoReply> raw = raw(WhoAmIGrpc.getWhoMethod());

        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(
                        channel, raw, CallOptions.DEFAULT, new ByteArrayInputStream(new byte[] {(byte) 0xff, 1, 2})))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        assertThat(WhoAmIGrpc.newBlockingStub(channel)
                        .who(WhoRequest.getDefaultInstance())
                        .getPod())
                .isEqualTo("p");
    }

    /** {@code method} sending raw bytes, as a client whose requests do not parse. */
    private static <RespT> MethodDescriptor<InputStream, RespT> raw(MethodDescriptor<?, RespT> method) {
        return method.toBuilder(
                        new MethodDescriptor.Marshaller<InputStream>() {
                            @Override
                            public InputStream stream(InputStream value) {
                                return value;
                            }

                            @Override
                            public InputStream parse(InputStream stream) {
                                return stream;
                            }
                        },
                        method.getResponseMarshaller())
                .build();
    }

    private ServerStack everyFeature() {
        return ServerStack.builder()
                .adminAuthorization(admin())
                .warmUp()
                .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS).build())
                .admission(admission())
                .faults(faults)
                .inFlight(inFlight)
                .build();
    }

    private static AdminAuthorization admin() {
        return AdminAuthorization.builder(
                        List.of(AdminMethods.of(WhoAmIGrpc.getDrainMethod(), WhoAmIGrpc.getResumeMethod())))
                .token(TOKEN)
                .build();
    }

    private static ServerInterceptor admission() {
        return AdmissionInterceptors.server(
                        Admission.builder(AdmissionConfig.builder().build()).build())
                .build();
    }

    private ManagedChannel serve(ServerStack stack) throws Exception {
        String name = InProcessServerBuilder.generateName();
        Server server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(stack.intercept(new WhoAmIGrpc.WhoAmIImplBase() {
                    @Override
                    public void who(WhoRequest request, StreamObserver<WhoReply> reply) {
                        seenByHandler.add("budget=" + Budget.current().isPresent() + " in-flight=" + inFlight.count());
                        CountDownLatch hold = holdWho.getAndSet(null);
                        Runnable answer = () -> {
                            reply.onNext(WhoReply.newBuilder().setPod("p").build());
                            reply.onCompleted();
                        };
                        if (hold == null) {
                            answer.run();
                        } else { // answered when the test lets it, off the transport's thread
                            new Thread(() -> {
                                        try {
                                            hold.await(10, TimeUnit.SECONDS);
                                        } catch (InterruptedException e) {
                                            Thread.currentThread().interrupt();
                                        }
                                        answer.run();
                                    })
                                    .start();
                        }
                    }

                    @Override
                    public void drain(DrainRequest request, StreamObserver<DrainReply> reply) {
                        seenByHandler.add("drain");
                        reply.onNext(DrainReply.getDefaultInstance());
                        reply.onCompleted();
                    }
                }))
                .build()
                .start();
        closeables.add(() -> server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        ManagedChannel channel =
                InProcessChannelBuilder.forName(name).directExecutor().build();
        closeables.add(0, () -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return channel;
    }
}
