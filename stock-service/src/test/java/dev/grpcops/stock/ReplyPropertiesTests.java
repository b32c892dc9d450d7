package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

class ReplyPropertiesTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withUserConfiguration(Properties.class);

    @ParameterizedTest
    @ValueSource(ints = {0, -1})
    void aLimitBelowOneStopsStartupNamingTheProperty(int limit) {
        runner.withPropertyValues("stock.max-pending-replies=" + limit)
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("stock.max-pending-replies must be at least 1"));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 10_000})
    void oneOrMoreIsFine(int limit) {
        runner.withPropertyValues("stock.max-pending-replies=" + limit).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(ReplyProperties.class).maxPendingReplies())
                    .isEqualTo(limit);
        });
    }

    @Test
    void defaultsToTenThousand() {
        runner.run(context -> assertThat(context.getBean(ReplyProperties.class).maxPendingReplies())
                .isEqualTo(10_000));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(ReplyProperties.class)
    static class Properties {}
}
