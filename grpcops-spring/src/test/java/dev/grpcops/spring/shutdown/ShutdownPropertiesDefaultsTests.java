package dev.grpcops.spring.shutdown;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.shutdown.DrainBeforeStop;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.shutdown.drain-delay} left unset is the core's default (the properties keep literal
 * values so that the generated metadata, and the docs' defaults, show them).
 */
@Timeout(30)
class ShutdownPropertiesDefaultsTests {

    @Test
    void anUnsetDrainDelayIsTheCoresDefault() {
        DrainBeforeStop core = DrainBeforeStop.builder(
                        new io.grpc.protobuf.services.HealthStatusManager(),
                        new dev.grpcops.shutdown.InFlightCalls(java.util.Set.of()))
                .build();

        assertThat(new ShutdownProperties().getDrainDelay()).isEqualTo(core.drainDelay());
    }
}
