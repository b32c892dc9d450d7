package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * {@link AbstractChainIT}'s checks against the beans Spring AOT made at build time ({@code process-aot}, in every
 * service jar), switched on as a user would: {@code -Dspring.aot.enabled=true}, here through
 * {@code JAVA_TOOL_OPTIONS} as in a container.
 */
@ResourceLock(AbstractChainIT.CHAIN)
@Order(7) // the lanes' order: junit-platform.properties
class AotChainIT extends AbstractChainIT {

    @BeforeAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startAotChain() {
        // The build had no tracing endpoint: one set now (nothing listens there) traces nothing, and
        // each service says so.
        startChain(
                "-aot",
                Map.of(
                        "JAVA_TOOL_OPTIONS", "-Dspring.aot.enabled=true",
                        "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"));
        for (ServiceProcess service : chain()) {
            assertThat(service.log())
                    .as(service.name)
                    .contains("Starting AOT-processed")
                    .contains("Traces are to go to http://127.0.0.1:9/v1/traces, but this process runs the beans"
                            + " Spring AOT made at build time without tracing");
        }
    }
}
