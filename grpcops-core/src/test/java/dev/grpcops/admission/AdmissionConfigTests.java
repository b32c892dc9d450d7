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
                bad("limit", () -> new AdmissionConfig(0, List.of(PriorityLevelConfig.of("default", 1)), S, S, S)),
                bad(
                        "limit",
                        () -> new AdmissionConfig(
                                1, List.of(PriorityLevelConfig.of("a", 1), PriorityLevelConfig.of("b", 1)), S, S, S)),
                bad("levels", () -> new AdmissionConfig(10, List.of(), S, S, S)),
                bad(
                        "levels.a",
                        () -> new AdmissionConfig(
                                10, List.of(PriorityLevelConfig.of("a", 1), PriorityLevelConfig.of("a", 2)), S, S, S)),
                bad(
                        "max-wait",
                        () -> new AdmissionConfig(10, List.of(PriorityLevelConfig.of("a", 1)), Duration.ZERO, S, S)),
                bad(
                        "max-retry-pushback",
                        () -> new AdmissionConfig(
                                10, List.of(PriorityLevelConfig.of("a", 1)), S, Duration.ofSeconds(2), S)),
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
                        () -> new CallerPolicy(
                                Map.of(Criticality.CRITICAL, "c", Criticality.DEFAULT, "d"),
                                Map.of(),
                                Map.of(),
                                Criticality.CRITICAL)),
                bad(
                        "callers.batch.level",
                        () -> checked(
                                new AdmissionConfig(
                                        10,
                                        List.of(
                                                PriorityLevelConfig.of("critical", 1),
                                                PriorityLevelConfig.of("default", 1),
                                                PriorityLevelConfig.of("sheddable", 1)),
                                        S,
                                        S,
                                        S),
                                new CallerPolicy(
                                        CallerPolicyTests.levelsByCriticality(),
                                        Map.of("batch", "bulk"),
                                        Map.of(),
                                        Criticality.CRITICAL))));
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
