package dev.grpcops.autoconfigure.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRules;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class BudgetAutoConfigurationTests {

    private static final String SERVER = "grpcopsBudgetServerInterceptor";
    private static final String CLIENT = "grpcopsBudgetClientInterceptor";

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(BudgetAutoConfiguration.class));

    @Test
    void defaultsAreTheDesignNumbers() {
        runner.run(context -> {
            assertThat(context.getBean(BudgetRules.class))
                    .isEqualTo(BudgetRules.builder()
                            .reserve(Duration.ofMillis(200))
                            .defaultBudget(Duration.ofSeconds(2))
                            .minDownstream(Duration.ofMillis(300))
                            .retryMin(Duration.ofMillis(700))
                            .build());
            assertThat(context).hasBean(SERVER).hasBean(CLIENT).hasSingleBean(BudgetInterceptors.class);
            assertThat(context.getBean(SERVER))
                    .isSameAs(context.getBean(BudgetInterceptors.class).server());
        });
    }

    @Test
    void propertiesOverrideTheRules() {
        runner.withPropertyValues(
                        "grpcops.budget.reserve=50ms",
                        "grpcops.budget.default-budget=5s",
                        "grpcops.budget.min-downstream=100ms",
                        "grpcops.budget.retry-min=1s")
                .run(context -> assertThat(context.getBean(BudgetRules.class))
                        .isEqualTo(BudgetRules.builder()
                                .reserve(Duration.ofMillis(50))
                                .defaultBudget(Duration.ofSeconds(5))
                                .minDownstream(Duration.ofMillis(100))
                                .retryMin(Duration.ofSeconds(1))
                                .build()));
    }

    @Test
    void badValuesStopStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.budget.reserve=-1ms")
                .run(context ->
                        assertThat(context).getFailure().rootCause().hasMessageContaining("grpcops.budget.reserve"));
    }

    /** The ledger token travels downstream: it may never be the admin token, nor a placeholder. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({
        "a-ledger-token-0123456789, a-ledger-token-0123456789, is the admin token",
        "changeme, , grpcops.budget.ledger.token (env GRPCOPS_BUDGET_LEDGER_TOKEN) is a known placeholder",
    })
    void aLedgerTokenThatIsTheAdminTokenOrNoSecretStopsTheStart(String ledger, String admin, String message) {
        runner.withPropertyValues(
                        "grpcops.budget.ledger.token=" + ledger, "grpcops.admin.token=" + (admin == null ? "" : admin))
                .run(context ->
                        assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining(message));
    }

    @Test
    void aLedgerTokenOfItsOwnIsTaken() {
        runner.withPropertyValues(
                        "grpcops.budget.ledger.token=a-ledger-token-0123456789",
                        "grpcops.admin.token=an-admin-token-0123456789")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(BudgetInterceptors.class));
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnRules() {
        runner.withUserConfiguration(OwnRules.class)
                .run(context -> assertThat(context.getBean(BudgetRules.class)).isSameAs(OwnRules.RULES));
    }

    @Test
    void metricsGoToMicrometerWhenThereIsARegistryUnlessTheApplicationListensItself() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> assertThat(context.getBean(BudgetListener.class))
                        .isSameAs(context.getBean("micrometerBudgetListener")));
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(BudgetListener.class, () -> BudgetListener.NONE)
                .run(context ->
                        assertThat(context.getBean(BudgetListener.class)).isSameAs(BudgetListener.NONE));
    }

    /** Without a registry nothing is recorded, and no empty registry is made to record into. */
    @Test
    void withoutAMeterRegistryNothingIsRecorded() {
        runner.run(context -> {
            assertThat(context.getBean(BudgetListener.class)).isSameAs(BudgetListener.NONE);
            assertThat(context).doesNotHaveBean(MeterRegistry.class);
        });
    }

    @Test
    void canBeSwitchedOff() {
        runner.withPropertyValues("grpcops.budget.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(SERVER)
                        .doesNotHaveBean(CLIENT)
                        .hasSingleBean(BudgetRules.class));
    }

    @Test
    void clientHalfNeedsTheClientStarter() {
        runner.withClassLoader(new FilteredClassLoader(GrpcGlobalClientInterceptor.class))
                .run(context -> assertThat(context).hasBean(SERVER).doesNotHaveBean(CLIENT));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRules {

        static final BudgetRules RULES = BudgetRules.builder()
                .reserve(Duration.ofMillis(10))
                .defaultBudget(Duration.ofSeconds(1))
                .minDownstream(Duration.ofMillis(10))
                .retryMin(Duration.ofMillis(10))
                .build();

        @Bean
        BudgetRules myRules() {
            return RULES;
        }
    }
}
