package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Configuration that cannot work is refused, naming the setting. */
class AdmissionConfigTests {

    private static final Duration S = Duration.ofSeconds(1);

    static Stream<Arguments> badConfigurations() {
        return Stream.of(
                bad(
                        "limit",
                        () -> AdmissionConfig.builder()
                                .limit(0)
                                .levels(List.of(PriorityLevelConfig.of("default", 1)))
                                .maxWait(S)
                                .retryPushback(S, S)
                                .build()),
                bad(
                        "limit",
                        () -> AdmissionConfig.builder()
                                .limit(1)
                                .levels(List.of(PriorityLevelConfig.of("a", 1), PriorityLevelConfig.of("b", 1)))
                                .maxWait(S)
                                .retryPushback(S, S)
                                .build()),
                bad(
                        "levels",
                        () -> AdmissionConfig.builder()
                                .limit(10)
                                .levels(List.of())
                                .maxWait(S)
                                .retryPushback(S, S)
                                .build()),
                bad(
                        "levels.a",
                        () -> AdmissionConfig.builder()
                                .limit(10)
                                .levels(List.of(PriorityLevelConfig.of("a", 1), PriorityLevelConfig.of("a", 2)))
                                .maxWait(S)
                                .retryPushback(S, S)
                                .build()),
                bad(
                        "max-wait",
                        () -> AdmissionConfig.builder()
                                .limit(10)
                                .levels(List.of(PriorityLevelConfig.of("a", 1)))
                                .maxWait(Duration.ZERO)
                                .retryPushback(S, S)
                                .build()),
                bad(
                        "max-retry-pushback",
                        () -> AdmissionConfig.builder()
                                .limit(10)
                                .levels(List.of(PriorityLevelConfig.of("a", 1)))
                                .maxWait(S)
                                .retryPushback(Duration.ofSeconds(2), S)
                                .build()),
                bad(
                        "levels.default.shares",
                        () -> PriorityLevelConfig.builder("default").shares(-1).build()),
                bad(
                        "levels.default.queues",
                        () -> PriorityLevelConfig.builder("default").queues(-1).build()),
                bad(
                        "levels.default.hand-size",
                        () -> PriorityLevelConfig.builder("default").queues(4).build()),
                bad(
                        "levels.default.hand-size",
                        () -> PriorityLevelConfig.builder("default")
                                .queues(128)
                                .handSize(10)
                                .build()),
                bad(
                        "levels.default.queue-length-limit",
                        () -> PriorityLevelConfig.builder("default")
                                .queueLengthLimit(0)
                                .build()),
                bad(
                        "criticality-levels.sheddable",
                        () -> CallerPolicy.builder()
                                .criticalityLevels(Map.of(Criticality.CRITICAL, "c", Criticality.DEFAULT, "d"))
                                .build()),
                bad(
                        "callers.batch.level",
                        () -> checked(
                                AdmissionConfig.builder()
                                        .limit(10)
                                        .levels(List.of(
                                                PriorityLevelConfig.of("critical", 1),
                                                PriorityLevelConfig.of("default", 1),
                                                PriorityLevelConfig.of("sheddable", 1)))
                                        .maxWait(S)
                                        .retryPushback(S, S)
                                        .build(),
                                CallerPolicy.builder()
                                        .criticalityLevels(CallerPolicyTests.levelsByCriticality())
                                        .callerLevel("batch", "bulk")
                                        .build())));
    }

    private static Object checked(AdmissionConfig config, CallerPolicy policy) {
        config.check(policy);
        return config;
    }

    private static Arguments bad(String field, Supplier<Object> construction) {
        return Arguments.of(field, construction);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badConfigurations")
    void isRefusedNamingTheSetting(String field, Supplier<Object> construction) {
        assertThatThrownBy(construction::get)
                .isInstanceOf(InvalidAdmissionConfigException.class)
                .hasMessageStartingWith(field + " ")
                .satisfies(
                        e -> org.assertj.core.api.Assertions.assertThat(((InvalidAdmissionConfigException) e).field())
                                .isEqualTo(field));
    }
}
