package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.FakeClock;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Outlier ejection counts only what says a replica is broken (design §16): three in-process replicas
 * picked in turn (so that only ejection moves the shares), judged every second of fake time by the
 * defaults (30 % of 10 calls or more, 10 s out, never more than a third).
 */
@Timeout(60)
class OutlierEjectionTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private InProcessReplicas replicas;

    @AfterEach
    void stop() throws InterruptedException {
        if (replicas != null) {
            replicas.close();
        }
    }

    private void start(ServiceConfigs.Balancing balancing) throws Exception {
        replicas = new InProcessReplicas(
                clock,
                3,
                ServiceConfigs.builder()
                        .balancing(balancing)
                        .healthCheck(InProcessReplicas.HEALTH_NAME)
                        .build(),
                7);
        replicas.call(30, 3);
    }

    /** Every other call of replica 0 ends as {@code status} (with {@code trailers}). */
    private void halfOfReplicaZeroEndsAs(Status status, Metadata trailers) {
        replicas.replica(0).failWith(status, trailers, call -> call % 2 == 0);
    }

    /** Calls for about {@code seconds} of fake time (3 at a time, 1 ms each): the shares of the last second. */
    private List<Integer> callFor(int seconds) throws InterruptedException {
        replicas.call(3000 * (seconds - 1), 3);
        return replicas.call(3000, 3);
    }

    @Test
    void aReplicaFailingInternalIsEjectedAndTriedAgainAfterItsTimeOut() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        halfOfReplicaZeroEndsAs(Status.INTERNAL, null);

        List<Integer> out = callFor(3);
        assertThat(out.get(0))
                .as("calls to the failing replica once judged: %s", out)
                .isZero();

        replicas.replica(0).failWith(null);
        clock.forward(Duration.ofSeconds(10));
        List<Integer> back = replicas.call(300, 3);
        assertThat(back.get(0)).as("after its 10 s out: %s", back).isGreaterThan(50);
    }

    /** The calls' listener hears of each ejection and each return, with the channel's next call. */
    @Test
    void theCallsListenerHearsTheEjectionAndTheReturn() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        java.util.concurrent.atomic.AtomicInteger ejected = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger returned = new java.util.concurrent.atomic.AtomicInteger();
        BalancingListener listener = new BalancingListener() {
            @Override
            public void ejected() {
                ejected.incrementAndGet();
            }

            @Override
            public void returned() {
                returned.incrementAndGet();
            }
        };
        InProcessReplicas.Caller heard = (stub, request) ->
                InProcessReplicas.Caller.PLAIN.call(stub.withInterceptors(listener.interceptor()), request);
        halfOfReplicaZeroEndsAs(Status.INTERNAL, null);

        List<Integer> out = replicas.run(9000, 3, heard).calls();
        assertThat(out.get(0)).as("the failing replica out: %s", out).isLessThan(3000);
        assertThat(ejected).as("ejections heard").hasValue(1);
        assertThat(returned).as("returns heard while it is out").hasValue(0);

        replicas.replica(0).failWith(null);
        clock.forward(Duration.ofSeconds(10));
        List<Integer> back = replicas.run(300, 3, heard).calls();
        assertThat(back.get(0)).as("after its 10 s out: %s", back).isGreaterThan(50);
        assertThat(ejected).as("ejections heard").hasValue(1);
        assertThat(returned).as("returns heard").hasValue(1);
    }

    /** Outlier detection switched off at run time: the replicas it had ejected are back in the picks at once. */
    @Test
    void switchedOffItsEjectedReplicasAreBackAtOnce() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        halfOfReplicaZeroEndsAs(Status.INTERNAL, null);
        assertThat(callFor(3).get(0)).as("ejected").isZero();
        replicas.replica(0).failWith(null);

        replicas.reconfigure(ServiceConfigs.builder()
                .balancing(ServiceConfigs.Balancing.ROUND_ROBIN)
                .outlierDetection(null)
                .healthCheck(InProcessReplicas.HEALTH_NAME)
                .build());
        replicas.replica(0).awaitOffered();
        List<Integer> back = replicas.call(300, 3);
        assertThat(back.get(0)).as("before its 10 s out were over: %s", back).isGreaterThan(50);
    }

    @Test
    void aReplicaThatShedsIsNeverEjected() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        halfOfReplicaZeroEndsAs(Status.RESOURCE_EXHAUSTED.withDescription("shedding"), null);

        List<Integer> shares = callFor(4);
        assertThat(shares.get(0))
                .as("a third of the calls, as before: %s", shares)
                .isBetween(900, 1100);
    }

    @Test
    void aReplicaWhoseCallersRunOutOfTimeOrCancelIsNeverEjected() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        halfOfReplicaZeroEndsAs(Status.DEADLINE_EXCEEDED, null);
        assertThat(callFor(3).get(0)).isBetween(900, 1100);
        halfOfReplicaZeroEndsAs(Status.CANCELLED, null);
        assertThat(callFor(3).get(0)).isBetween(900, 1100);
    }

    @Test
    void aFailureRelayedFromFurtherDownIsNotTheReplicasOwn() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        Metadata relayed = new Metadata();
        relayed.put(CallOutcome.RELAYED_KEY, "1");
        halfOfReplicaZeroEndsAs(Status.UNAVAILABLE.withDescription("stock down"), relayed);
        assertThat(callFor(3).get(0)).isBetween(900, 1100);
    }

    @Test
    void applicationErrorsAreAnswersNotFailures() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        halfOfReplicaZeroEndsAs(Status.NOT_FOUND.withDescription("no such SKU"), null);
        assertThat(callFor(3).get(0)).isBetween(900, 1100);
    }

    @Test
    void neverMoreThanAThirdOfTheReplicasIsOut() throws Exception {
        start(ServiceConfigs.Balancing.ROUND_ROBIN);
        replicas.replica(0).failWith(Status.UNAVAILABLE);
        replicas.replica(1).failWith(Status.UNAVAILABLE);

        List<Integer> shares = callFor(3);
        assertThat(shares)
                .as("one failing replica out, the other kept: %s", shares)
                .containsOnlyOnce(0);
    }

    @Test
    void withoutOutlierDetectionNobodyIsEjected() throws Exception {
        replicas = new InProcessReplicas(
                clock,
                3,
                ServiceConfigs.builder()
                        .balancing(ServiceConfigs.Balancing.ROUND_ROBIN)
                        .outlierDetection(null)
                        .build(),
                7);
        replicas.replica(0).failWith(Status.INTERNAL);
        assertThat(callFor(3).get(0)).isBetween(900, 1100);
        assertThat(clock.pendingTasks()).as("no judging timer").isZero();
    }

    @Test
    void aBadOutlierDetectionConfigIsRefusedNamingTheField() {
        var parsed = new PeakEwmaLoadBalancerProvider()
                .parseLoadBalancingPolicyConfig(Map.of("outlierDetection", Map.of("failurePercentage", 130.0)));
        assertThat(parsed.getError()).isNotNull();
        assertThat(parsed.getError().getDescription()).contains("failure-percentage must be 0-100");
    }
}
