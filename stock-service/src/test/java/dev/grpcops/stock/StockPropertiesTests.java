package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

class StockPropertiesTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withUserConfiguration(Properties.class);

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "stock.stats.max-skus, 0",
        "stock.stats.max-skus, -5",
        "stock.stats.max-samples-per-sku, 0",
        "stock.stats.max-samples-per-sku, -1"
    })
    void valueBelowOneStopsStartupNamingTheProperty(String property, int value) {
        runner.withPropertyValues(property + "=" + value)
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining(property + " must be at least 1"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({"stock.stats.max-skus, 1", "stock.stats.max-samples-per-sku, 1"})
    void oneIsEnough(String property, int value) {
        runner.withPropertyValues(property + "=" + value)
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(StockProperties.class)
    static class Properties {}
}
