package dev.grpcops.autoconfigure.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.autoconfigure.budget.BudgetAutoConfiguration;
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryLimiter;
import dev.grpcops.retry.RetryListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class RetryAutoConfigurationTests {

    private static final String ATTEMPTS = "grpcopsRetryAttemptInterceptor";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BudgetAutoConfiguration.class, RetryAutoConfiguration.class));

    @Test
    void aRetryLimitedByTheBucketAndTheBudgetAndTheAttemptInterceptor() {
        runner.run(context -> {
            assertThat(context)
                    .hasSingleBean(Retry.class)
                    .hasSingleBean(RetryLimiter.class)
                    .hasBean(ATTEMPTS);
            RetryLimiter limiter = context.getBean(RetryLimiter.class);
            for (int i = 0; i < 5; i++) {
                limiter.onFailure("stock:50061");
            }
            assertThat(limiter.tryAcquire("stock:50061"))
                    .as("the bucket at half")
                    .isFalse();
            assertThat(limiter.tryAcquire("pricing:50062"))
                    .as("another target keeps its own")
                    .isTrue();
        });
    }

    @Test
    void propertiesSetTheLimits() {
        runner.withPropertyValues(
                        "grpcops.retry.limiter.max-tokens=2",
                        "grpcops.retry.limiter.budget-percent=0",
                        "grpcops.retry.limiter.min-retries-per-second=0.1",
                        "grpcops.retry.limiter.budget-window=10s")
                .run(context -> {
                    RetryLimiter limiter = context.getBean(RetryLimiter.class);
                    assertThat(limiter.tryAcquire("stock:50061"))
                            .as("the floor: 0.1/s × 10 s = 1")
                            .isTrue();
                    assertThat(limiter.tryAcquire("stock:50061")).isFalse();
                    limiter.onFailure("pricing:50062");
                    assertThat(limiter.tryAcquire("pricing:50062"))
                            .as("1 of 2 tokens is half")
                            .isFalse();
                });
    }

    @Test
    void theLimiterCanBeSwitchedOff() {
        runner.withPropertyValues("grpcops.retry.limiter.enabled=false").run(context -> {
            RetryLimiter limiter = context.getBean(RetryLimiter.class);
            for (int i = 0; i < 100; i++) {
                limiter.onFailure("stock:50061");
                assertThat(limiter.tryAcquire("stock:50061")).isTrue();
            }
        });
    }

    @Test
    void badValuesStopStartupNamingTheProperty() {
        for (String property : new String[] {
            "max-tokens=0", "token-ratio=0", "budget-percent=101", "budget-window=0s", "min-retries-per-second=-1"
        }) {
            runner.withPropertyValues("grpcops.retry.limiter." + property)
                    .run(context -> assertThat(context)
                            .getFailure()
                            .rootCause()
                            .hasMessageContaining(
                                    "grpcops.retry.limiter." + property.substring(0, property.indexOf('='))));
        }
    }

    /** The attempts keep their targets when the deadline budget is off: one failing backend throttles only itself. */
    @Test
    void theAttemptInterceptorStaysWhenTheBudgetIsOff() {
        runner.withPropertyValues("grpcops.budget.enabled=false")
                .run(context ->
                        assertThat(context).hasBean(ATTEMPTS).doesNotHaveBean("grpcopsBudgetClientInterceptor"));
    }

    @Test
    void metricsGoToMicrometerWhenThereIsARegistry() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context.getBean(RetryListener.class)).isSameAs(context.getBean("micrometerRetryListener"));
            context.getBean(RetryLimiter.class).onFailure("stock:50061");
            assertThat(context.getBean(MeterRegistry.class)
                            .get("grpc.retry.tokens")
                            .tag("target", "stock:50061")
                            .gauge()
                            .value())
                    .isEqualTo(9.0);
        });
        runner.run(context -> assertThat(context.getBean(RetryListener.class)).isSameAs(RetryListener.NONE));
    }

    @Test
    void theInterceptorNeedsTheClientStarter() {
        runner.withClassLoader(new FilteredClassLoader(GrpcGlobalClientInterceptor.class))
                .run(context -> assertThat(context).hasSingleBean(Retry.class).doesNotHaveBean(ATTEMPTS));
    }

    @Test
    void badHedgingValuesStopStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.retry.hedging.percentile=10")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.retry.hedging.percentile"));
        runner.withPropertyValues("grpcops.retry.hedging.max-delay=1ms", "grpcops.retry.hedging.min-delay=5ms")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.retry.hedging.max-delay"));
    }
}
