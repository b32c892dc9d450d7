package dev.grpcops.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import dev.grpcops.admin.internal.RefusedAdminCalls;
import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Refused admin calls, per caller address, on a fake clock: limited, and logged in aggregate. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class AdminRateLimitTests {

    private static final String DRAIN = "grpcops.v1.WhoAmI/Drain";
    private static final String TOKEN = "rate-limit-test-token";
    private static final Status WRONG = Status.PERMISSION_DENIED.withDescription("admin token rejected");
    /** 5 refusals per 10 s, 3 addresses at most, one line per address per 10 s. */
    private static final AdminRateLimit LIMIT = AdminRateLimit.builder()
            .maxFailures(5)
            .window(Duration.ofSeconds(10))
            .maxPeers(3)
            .logInterval(Duration.ofSeconds(10))
            .build();

    private final FakeClock clock = new FakeClock();

    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final RefusedAdminCalls refusals = new RefusedAdminCalls(LIMIT, clock.nanoClock(), warnings::add);
    private final AtomicInteger drains = new AtomicInteger();
    private final List<String> outcomes = new CopyOnWriteArrayList<>();
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void anAddressIsRefusedUncheckedAfterMaxFailuresUntilTheWindowEnds() {
        for (int i = 0; i < 4; i++) {
            refusals.refused("10.0.0.1", DRAIN, WRONG, true);
            clock.forward(Duration.ofSeconds(1));
        }
        assertThat(refusals.blocked("10.0.0.1")).as("4 of 5").isZero();
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        // The window began at the first refusal, 4 s ago.
        assertThat(refusals.blocked("10.0.0.1")).isEqualTo(Duration.ofSeconds(6));
        assertThat(refusals.blocked("10.0.0.2"))
                .as("other addresses are not affected")
                .isZero();

        clock.forward(Duration.ofSeconds(5));
        refusals.refused("10.0.0.1", DRAIN, Status.RESOURCE_EXHAUSTED, false);
        assertThat(refusals.blocked("10.0.0.1"))
                .as("unchecked refusals do not extend it")
                .isEqualTo(Duration.ofSeconds(1));
        clock.forward(Duration.ofSeconds(1));
        assertThat(refusals.blocked("10.0.0.1")).isZero();

        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        assertThat(refusals.blocked("10.0.0.1"))
                .as("a new window, with one refusal in it")
                .isZero();
    }

    @Test
    void failuresSpreadWiderThanTheWindowNeverBlock() {
        for (int i = 0; i < 20; i++) {
            refusals.refused("10.0.0.1", DRAIN, WRONG, true);
            assertThat(refusals.blocked("10.0.0.1")).isZero();
            clock.forward(Duration.ofMillis(2_600)); // 4 per window at most
        }
    }

    @Test
    void theRightTokenForgivesTheAddressCount() {
        for (int i = 0; i < 4; i++) {
            refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        }
        refusals.succeeded("10.0.0.1");
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        assertThat(refusals.blocked("10.0.0.1")).isZero();
    }

    @Test
    void refusedCallsAreLoggedAtMostOncePerAddressPerIntervalWithTheirCount() {
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        assertThat(warnings)
                .containsExactly(
                        "admin: 1 refused call from 10.0.0.1; latest: grpcops.v1.WhoAmI/Drain PERMISSION_DENIED admin token rejected");
        for (int i = 0; i < 311; i++) {
            clock.forward(Duration.ofMillis(20));
            refusals.refused(
                    "10.0.0.1", DRAIN, i < 4 ? WRONG : Status.RESOURCE_EXHAUSTED.withDescription("too many"), i < 4);
        }
        refusals.refused("10.0.0.2", DRAIN, WRONG, true);
        assertThat(warnings).as("one line per address so far").hasSize(2);

        clock.forward(Duration.ofMillis(3_780)); // 10 s after the first line
        refusals.refused("10.0.0.1", DRAIN, Status.RESOURCE_EXHAUSTED.withDescription("too many"), false);
        assertThat(warnings)
                .hasSize(3)
                .last()
                .isEqualTo("admin: 312 refused calls from 10.0.0.1 in the last 10.0 s"
                        + " (308 not checked: more than 5 refused within 10.0 s); latest: grpcops.v1.WhoAmI/Drain"
                        + " RESOURCE_EXHAUSTED too many");
    }

    @Test
    void countsNotLoggedYetAreLoggedByTheNextCallOnceTheirIntervalHasPassed() {
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        clock.forward(Duration.ofSeconds(1));
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        assertThat(warnings).hasSize(1);

        clock.forward(Duration.ofSeconds(10));
        refusals.succeeded("10.0.0.9"); // any admin call, from anyone
        assertThat(warnings)
                .hasSize(2)
                .last()
                .asString()
                .startsWith("admin: 2 refused calls from 10.0.0.1 in the last 10.0 s;");

        assertThat(refusals.trackedPeers()).as("kept while its line is recent").isOne();
        clock.forward(Duration.ofSeconds(10));
        refusals.blocked("10.0.0.9");
        assertThat(refusals.trackedPeers())
                .as("nothing left to count or log: forgotten")
                .isZero();
        assertThat(warnings).hasSize(2);
    }

    @Test
    void trackedAddressesAreBoundedTheLeastRecentlySeenForgottenAfterItsCountIsLogged() {
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        refusals.refused("10.0.0.1", DRAIN, WRONG, true);
        refusals.refused("10.0.0.2", DRAIN, WRONG, true);
        refusals.refused("10.0.0.3", DRAIN, WRONG, true);
        refusals.refused("10.0.0.4", DRAIN, WRONG, true);
        assertThat(refusals.trackedPeers()).isEqualTo(3);
        assertThat(warnings)
                .as("the second refusal of 10.0.0.1, logged as it is forgotten")
                .filteredOn(line -> line.startsWith("admin: 1 refused call from 10.0.0.1;"))
                .hasSize(2);
        for (int i = 0; i < 1_000; i++) {
            refusals.refused("10.1." + (i / 256) + "." + (i % 256), DRAIN, WRONG, true);
        }
        assertThat(refusals.trackedPeers()).isEqualTo(3);
    }

    @Test
    void limitsAreValidated() {
        assertThatThrownBy(() -> AdminRateLimit.builder()
                        .maxFailures(0)
                        .window(Duration.ofSeconds(1))
                        .maxPeers(1)
                        .logInterval(Duration.ofSeconds(1))
                        .build())
                .hasMessageContaining("maxFailures");
        assertThatThrownBy(() -> AdminRateLimit.builder()
                        .maxFailures(1)
                        .window(Duration.ZERO)
                        .maxPeers(1)
                        .logInterval(Duration.ofSeconds(1))
                        .build())
                .hasMessageContaining("window");
        assertThatThrownBy(() -> AdminRateLimit.builder()
                        .maxFailures(1)
                        .window(Duration.ofSeconds(1))
                        .maxPeers(0)
                        .logInterval(Duration.ofSeconds(1))
                        .build())
                .hasMessageContaining("maxPeers");
        assertThatThrownBy(() -> AdminRateLimit.builder()
                        .maxFailures(1)
                        .window(Duration.ofSeconds(1))
                        .maxPeers(1)
                        .logInterval(Duration.ofSeconds(-1))
                        .build())
                .hasMessageContaining("logInterval");
    }

    @Test
    void overTheLimitRefusedCallsGetResourceExhaustedAndTheMethodNeverRuns() throws Exception {
        start();
        for (int i = 0; i < 5; i++) {
            assertThat(refused("wrong-token-" + i).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        }
        Status blocked = refused(null);
        assertThat(blocked.getCode()).as("what was wrong is no longer said").isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(blocked.getDescription()).isEqualTo("too many refused admin calls: try again in 10 s");
        assertThat(refused("wrong-token-6").getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(drains).hasValue(0);
        assertThat(outcomes)
                .containsExactly(
                        "PERMISSION_DENIED",
                        "PERMISSION_DENIED",
                        "PERMISSION_DENIED",
                        "PERMISSION_DENIED",
                        "PERMISSION_DENIED",
                        "RESOURCE_EXHAUSTED",
                        "RESOURCE_EXHAUSTED");
        assertThat(warnings).as("one line for seven refusals so far").hasSize(1);

        clock.forward(Duration.ofSeconds(10));
        assertThat(refused("wrong-token-7").getCode())
                .as("checked again once the window has passed")
                .isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(warnings)
                .hasSize(2)
                .last()
                .asString()
                .startsWith("admin: 6 refused calls from ")
                .contains("(2 not checked: more than 5 refused within 10.0 s)");
    }

    /**
     * An address locked out learns nothing by guessing on: its token is not even compared, so the
     * right one is refused too until the window has passed (then it passes, and forgives the count).
     */
    @Test
    void aLockedOutAddressLearnsNothingEvenFromTheRightToken() throws Exception {
        start();
        for (int i = 0; i < 5; i++) {
            refused("wrong-token-" + i);
        }
        assertThat(refused(TOKEN).getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(drains).hasValue(0);

        clock.forward(Duration.ofSeconds(10));
        assertThat(drain(TOKEN).getStatus()).isEqualTo("NOT_SERVING");
        assertThat(drains).hasValue(1);
        assertThat(refused("wrong-token-7").getCode())
                .as("the right token forgave the address's count")
                .isEqualTo(Status.Code.PERMISSION_DENIED);
    }

    /**
     * Guesses spread over many addresses are bounded too: past max-refused-overall within the
     * window every address but the loopback is refused unchecked, while an operator on the
     * loopback (a port-forward into the pod) is not locked out by others.
     */
    @Test
    void guessesSpreadOverManyAddressesAreBoundedButNeverLockOutTheLoopback() {
        RefusedAdminCalls overall =
                new RefusedAdminCalls(LIMIT.toBuilder().maxRefusedOverall(8).build(), clock.nanoClock(), warnings::add);
        for (int i = 1; i <= 8; i++) {
            assertThat(overall.blocked("10.0.1." + i)).isZero();
            overall.refuse("10.0.1." + i, DRAIN, WRONG);
        }
        assertThat(overall.blocked("10.0.2.1")).as("an address never refused").isEqualTo(Duration.ofSeconds(10));
        assertThat(overall.blocked("127.0.0.1")).as("the loopback").isZero();
        assertThat(overall.blocked("::1")).isZero();
        assertThat(warnings).anyMatch(line -> line.contains("from all addresses"));
        clock.forward(Duration.ofSeconds(10));
        assertThat(overall.blocked("10.0.2.1")).isZero();
    }

    /** Admin calls let through run at most max-concurrent at once; one beyond ends RESOURCE_EXHAUSTED at once. */
    @Test
    void atMostMaxConcurrentAdminCallsRunAtOnce() throws Exception {
        String name = InProcessServerBuilder.generateName();
        List<StreamObserver<DrainReply>> held = new CopyOnWriteArrayList<>();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new WhoAmIGrpc.WhoAmIImplBase() {
                            @Override
                            public void drain(DrainRequest request, StreamObserver<DrainReply> responses) {
                                held.add(responses);
                            }
                        },
                        new AdminAuthorizationInterceptor(
                                List.of(AdminMethods.of(WhoAmIGrpc.getDrainMethod())),
                                TOKEN,
                                AdminListener.NONE,
                                new RefusedAdminCalls(
                                        LIMIT.toBuilder().maxConcurrent(2).build(), clock.nanoClock(), warnings::add),
                                "the admin token")))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        WhoAmIGrpc.WhoAmIFutureStub stub = WhoAmIGrpc.newFutureStub(channel)
                .withInterceptors(AdminCredentials.bearer(TOKEN))
                .withDeadlineAfter(5, TimeUnit.SECONDS);
        var first = stub.drain(DrainRequest.getDefaultInstance());
        var second = stub.drain(DrainRequest.getDefaultInstance());
        assertThat(held).hasSize(2);
        var third = stub.drain(DrainRequest.getDefaultInstance());
        assertThat(Status.fromThrowable(catchThrowableOfType(java.util.concurrent.ExecutionException.class, third::get))
                        .getCode())
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);

        held.get(0).onNext(DrainReply.getDefaultInstance());
        held.get(0).onCompleted();
        first.get(5, TimeUnit.SECONDS);
        second.cancel(true);
        var fourth = stub.drain(DrainRequest.getDefaultInstance());
        var fifth = stub.drain(DrainRequest.getDefaultInstance());
        assertThat(held)
                .as("two let through again: the ended and the cancelled call freed theirs")
                .hasSize(4);
        fourth.cancel(true);
        fifth.cancel(true);
    }

    private Status refused(String token) {
        return catchThrowableOfType(StatusRuntimeException.class, () -> drain(token))
                .getStatus();
    }

    private DrainReply drain(String token) {
        WhoAmIGrpc.WhoAmIBlockingStub stub = WhoAmIGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
        return (token == null ? stub : stub.withInterceptors(AdminCredentials.bearer(token)))
                .drain(DrainRequest.getDefaultInstance());
    }

    private void start() throws Exception {
        String name = InProcessServerBuilder.generateName();
        AdminAuthorizationInterceptor interceptor = new AdminAuthorizationInterceptor(
                List.of(AdminMethods.of(WhoAmIGrpc.getDrainMethod())),
                TOKEN,
                (method, outcome) -> outcomes.add(outcome.name()),
                refusals,
                "the admin token");
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new WhoAmIGrpc.WhoAmIImplBase() {
                            @Override
                            public void drain(DrainRequest request, StreamObserver<DrainReply> responses) {
                                drains.incrementAndGet();
                                responses.onNext(DrainReply.newBuilder()
                                        .setStatus("NOT_SERVING")
                                        .build());
                                responses.onCompleted();
                            }
                        },
                        interceptor))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }
}
