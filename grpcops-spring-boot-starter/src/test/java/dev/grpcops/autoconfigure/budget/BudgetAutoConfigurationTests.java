package dev.grpcops.autoconfigure.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRetry;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.RetryThrottling;
import dev.grpcops.budget.internal.BudgetClientInterceptor;
import dev.grpcops.budget.internal.BudgetServerInterceptor;
import java.time.Duration;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class BudgetAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BudgetAutoConfiguration.class));

    @Test
    void defaultsAreTheSpecNumbers() {
        runner.run(context -> {
            assertThat(context.getBean(BudgetRules.class)).isEqualTo(new BudgetRules(
                    Duration.ofMillis(200), Duration.ofSeconds(2), Duration.ofMillis(300), Duration.ofMillis(700)));
            assertThat(context).hasSingleBean(BudgetServerInterceptor.class)
                    .hasSingleBean(BudgetClientInterceptor.class)
                    .hasSingleBean(BudgetRetry.class);
        });
    }

    @Test
    void propertiesOverrideTheRules() {
        runner.withPropertyValues("grpcops.budget.reserve=50ms", "grpcops.budget.default-budget=5s",
                "grpcops.budget.min-downstream=100ms", "grpcops.budget.retry-min=1s").run(context ->
                assertThat(context.getBean(BudgetRules.class)).isEqualTo(new BudgetRules(
                        Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofSeconds(1))));
    }

    @Test
    void retryGovernorDefaultsAreSpec11AndPropertiesOverrideThem() {
        runner.run(context -> assertThat(context.getBean(RetryThrottling.class)).isEqualTo(RetryThrottling.DEFAULTS)
                .isEqualTo(new RetryThrottling(10, 0.1, 10, Duration.ofSeconds(10), 1)));
        runner.withPropertyValues("grpcops.budget.retry.max-tokens=20", "grpcops.budget.retry.token-ratio=0.5",
                "grpcops.budget.retry.budget-percent=20", "grpcops.budget.retry.budget-window=30s",
                "grpcops.budget.retry.min-retries-per-second=10").run(context ->
                assertThat(context.getBean(RetryThrottling.class))
                        .isEqualTo(new RetryThrottling(20, 0.5, 20, Duration.ofSeconds(30), 10)));
    }

    @Test
    void theGovernorCanBeMeasuredWithoutEnforcingIt() {
        runner.withPropertyValues("grpcops.budget.retry.enabled=false").run(context -> {
            var target = context.getBean(BudgetRetry.class).governor().target("stock:50061");
            for (int i = 0; i < 10; i++) {
                target.failed();
            }
            assertThat(target.tryAcquireRetry()).isTrue();
        });
        runner.run(context -> {
            var target = context.getBean(BudgetRetry.class).governor().target("stock:50061");
            for (int i = 0; i < 10; i++) {
                target.failed();
            }
            assertThat(target.tryAcquireRetry()).isFalse();
        });
    }

    @Test
    void badRetryValuesStopStartupNamingTheProperty() {
        for (String property : new String[] {"max-tokens=0", "token-ratio=0", "budget-percent=101", "budget-window=0s",
            "min-retries-per-second=-1"}) {
            runner.withPropertyValues("grpcops.budget.retry." + property).run(context ->
                    assertThat(context).getFailure().rootCause()
                            .hasMessageContaining("grpcops.budget.retry." + property.substring(0, property.indexOf('='))));
        }
    }

    @Test
    void badValuesStopStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.budget.reserve=-1ms").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("grpcops.budget.reserve"));
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnRules() {
        runner.withUserConfiguration(OwnRules.class).run(context ->
                assertThat(context.getBean(BudgetRules.class)).isSameAs(OwnRules.RULES));
    }

    @Test
    void metricsGoToMicrometerUnlessTheApplicationListensItself() {
        runner.run(context -> assertThat(context.getBean(BudgetListener.class)).isInstanceOf(MicrometerBudgetListener.class));
        runner.withBean(BudgetListener.class, () -> BudgetListener.NONE).run(context ->
                assertThat(context.getBean(BudgetListener.class)).isSameAs(BudgetListener.NONE));
    }

    @Test
    void canBeSwitchedOffWithoutBreakingCodeThatRetriesThroughIt() {
        runner.withPropertyValues("grpcops.budget.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean(BudgetServerInterceptor.class)
                        .doesNotHaveBean(BudgetClientInterceptor.class)
                        .hasSingleBean(BudgetRetry.class));
    }

    @Test
    void clientHalfNeedsTheClientStarter() {
        runner.withClassLoader(new FilteredClassLoader(GrpcGlobalClientInterceptor.class)).run(context ->
                assertThat(context).hasSingleBean(BudgetServerInterceptor.class)
                        .doesNotHaveBean(BudgetClientInterceptor.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRules {

        static final BudgetRules RULES = new BudgetRules(
                Duration.ofMillis(10), Duration.ofSeconds(1), Duration.ofMillis(10), Duration.ofMillis(10));

        @Bean
        BudgetRules myRules() {
            return RULES;
        }
    }
}
