package dev.grpcops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admin.AdminRateLimit;
import dev.grpcops.admission.AdaptiveLimit;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.Criticality;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.admission.QueueOrder;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.client.OutlierDetection;
import dev.grpcops.fault.Faults;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.RetryBudget;
import dev.grpcops.retry.TokenBucket;
import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.warmup.WarmUp;
import io.grpc.Status;
import io.grpc.protobuf.services.HealthStatusManager;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * design §18, one configuration shape: {@code builder()} starts at the defaults ({@code DEFAULTS}
 * where the value is immutable), and {@code toBuilder()} gives back every setting, changed or not.
 */
@Timeout(30)
class ConfigurationShapeTests {

    /** Each value: its defaults, and one with every setting changed. */
    static Stream<Arguments> values() {
        return Stream.of(
                Arguments.of(
                        BudgetRules.DEFAULTS,
                        BudgetRules.builder()
                                .reserve(Duration.ofMillis(50))
                                .defaultBudget(Duration.ofSeconds(5))
                                .minDownstream(Duration.ofMillis(100))
                                .retryMin(Duration.ofMillis(400))
                                .build()),
                Arguments.of(
                        AdaptiveLimit.DEFAULTS,
                        AdaptiveLimit.builder()
                                .minLimit(4)
                                .maxLimit(64)
                                .window(Duration.ofSeconds(2))
                                .tolerance(2)
                                .build()),
                Arguments.of(
                        AdmissionConfig.DEFAULTS,
                        AdmissionConfig.builder()
                                .limit(32)
                                .levels(PriorityLevelConfig.builder("only")
                                        .shares(3)
                                        .queues(16)
                                        .handSize(4)
                                        .queueLengthLimit(10)
                                        .build())
                                .maxWait(Duration.ofMillis(300))
                                .retryPushback(Duration.ofMillis(200), Duration.ofSeconds(4))
                                .queueOrder(QueueOrder.ARRIVAL)
                                .adaptiveLimit(AdaptiveLimit.DEFAULTS)
                                .build()),
                Arguments.of(
                        Hedging.DEFAULTS,
                        Hedging.builder()
                                .percentile(95)
                                .delay(Duration.ofMillis(5), Duration.ofMillis(500))
                                .minSamples(50)
                                .maxExtraPercent(5)
                                .build()),
                Arguments.of(
                        OutlierDetection.DEFAULTS,
                        OutlierDetection.builder()
                                .interval(Duration.ofSeconds(2))
                                .baseEjectionTime(Duration.ofSeconds(20))
                                .maxEjectionTime(Duration.ofSeconds(90))
                                .maxEjectionPercent(50)
                                .failurePercentage(40)
                                .minimumHosts(3)
                                .requestVolume(20)
                                .successRateStdevFactor(2.5)
                                .build()),
                Arguments.of(
                        Faults.NONE,
                        Faults.builder()
                                .delay(Duration.ofMillis(20))
                                .stall(Duration.ofMillis(100), Duration.ofSeconds(10))
                                .errorRatio(0.25)
                                .errorCode(Status.Code.INTERNAL)
                                .work(Duration.ofMillis(3))
                                .build()),
                Arguments.of(
                        AdminRateLimit.DEFAULTS,
                        AdminRateLimit.builder()
                                .maxFailures(3)
                                .window(Duration.ofSeconds(30))
                                .maxPeers(100)
                                .logInterval(Duration.ofSeconds(60))
                                .maxRefusedOverall(30)
                                .maxConcurrent(2)
                                .build()));
    }

    @ParameterizedTest
    @MethodSource("values")
    void aValuesDefaultsAreWhatItsBuilderStartsAtAndToBuilderKeepsEverySetting(Object defaults, Object changed)
            throws Exception {
        Object fromBuilder = defaults.getClass().getMethod("builder").invoke(null);
        assertThat(build(fromBuilder)).isEqualTo(defaults);
        assertThat(build(defaults.getClass().getMethod("toBuilder").invoke(defaults)))
                .isEqualTo(defaults);
        assertThat(changed).isNotEqualTo(defaults);
        assertThat(build(changed.getClass().getMethod("toBuilder").invoke(changed)))
                .isEqualTo(changed);
    }

    private static Object build(Object builder) throws Exception {
        return builder.getClass().getMethod("build").invoke(builder);
    }

    @Test
    void aPriorityLevelsToBuilderKeepsEverySetting() {
        PriorityLevelConfig level = PriorityLevelConfig.builder("batch")
                .shares(7)
                .queues(12)
                .handSize(3)
                .queueLengthLimit(9)
                .build();

        assertThat(level.toBuilder().build()).isEqualTo(level);
        assertThat(PriorityLevelConfig.of("batch", 7).toBuilder().build())
                .isEqualTo(PriorityLevelConfig.of("batch", 7));
    }

    @Test
    void aCallerPolicysToBuilderKeepsEveryRule() {
        CallerPolicy policy = CallerPolicy.builder()
                .criticalityLevel(Criticality.SHEDDABLE, "batch")
                .callerLevel("reports", "batch")
                .callerCap("mobile", Criticality.DEFAULT)
                .defaultCap(Criticality.SHEDDABLE)
                .build();
        CallerPolicy copy = policy.toBuilder().build();
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 1);

        for (String caller : List.of("reports", "mobile", "web")) {
            for (Criticality claimed : Criticality.values()) {
                Caller original = policy.classify(caller, claimed.value(), peer);
                Caller copied = copy.classify(caller, claimed.value(), peer);
                assertThat(copied.criticality())
                        .as(caller + " claiming " + claimed)
                        .isEqualTo(original.criticality());
                assertThat(copy.levelOf(copied))
                        .as(caller + " claiming " + claimed)
                        .isEqualTo(policy.levelOf(original));
            }
        }
        assertThat(CallerPolicy.DEFAULTS.classify("web", "critical", peer).criticality())
                .isEqualTo(Criticality.CRITICAL);
    }

    /** A feature that keeps state has no shared DEFAULTS: toBuilder() makes another with the same settings. */
    @Test
    void aStatefulFeaturesToBuilderMakesAnotherWithTheSameSettings() {
        RetryBudget budget = RetryBudget.builder()
                .percent(20)
                .window(Duration.ofSeconds(30))
                .minPerSecond(2)
                .build();
        assertSameSettings(
                budget,
                budget.toBuilder().build(),
                RetryBudget::percent,
                RetryBudget::window,
                RetryBudget::minPerSecond);
        assertThat(RetryBudget.builder().build().percent()).isEqualTo(10);

        TokenBucket bucket = TokenBucket.builder().maxTokens(20).tokenRatio(0.5).build();
        assertSameSettings(bucket, bucket.toBuilder().build(), TokenBucket::maxTokens, TokenBucket::tokenRatio);
        bucket.onFailure("stock");
        assertThat(bucket.toBuilder().build().tokens("stock"))
                .as("a new bucket is full")
                .isEqualTo(20);

        CancellationBudget cancellations =
                CancellationBudget.builder().perSecond(200).burst(50).build();
        assertSameSettings(
                cancellations,
                cancellations.toBuilder().build(),
                CancellationBudget::perSecond,
                CancellationBudget::burst);

        WarmUp warmUp = WarmUp.builder()
                .concurrency(2)
                .deadline(Duration.ofMillis(300))
                .timeLimit(Duration.ofSeconds(5))
                .build();
        assertSameSettings(
                warmUp, warmUp.toBuilder().build(), WarmUp::concurrency, WarmUp::deadline, WarmUp::timeLimit);

        DrainBeforeStop drain = DrainBeforeStop.builder(new HealthStatusManager(), new InFlightCalls(Set.of()))
                .drainDelay(Duration.ofSeconds(1))
                .grace(Duration.ofSeconds(3))
                .build();
        assertSameSettings(drain, drain.toBuilder().build(), DrainBeforeStop::drainDelay, DrainBeforeStop::grace);
    }

    @SafeVarargs
    private static <T> void assertSameSettings(T original, T copy, Function<T, ?>... settings) {
        for (Function<T, ?> setting : settings) {
            assertThat(setting.apply(copy)).isEqualTo(setting.apply(original));
        }
    }
}
