package dev.grpcops.edge;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

class EdgePropertiesTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withUserConfiguration(Properties.class);

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "edge.max-skus=0       | edge.max-skus must be at least 1",
                "edge.slow-delay=-1ms  | edge.slow-delay must be 0-60000 ms",
                "edge.slow-delay=61s   | edge.slow-delay must be 0-60000 ms",
            })
    void badValueStopsStartupNamingTheProperty(String property, String message) {
        runner.withPropertyValues(property)
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining(message));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(EdgeProperties.class)
    static class Properties {}
}
