package dev.grpcops.spring.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.warmup.WarmUp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.warmup.*} left unset are the core's defaults (the properties keep literal values so
 * that the generated metadata, and the docs' defaults, show them).
 */
@Timeout(30)
class WarmUpPropertiesDefaultsTests {

    @Test
    void unsetWarmUpPropertiesAreTheCoresDefaults() {
        WarmUpProperties warmUp = new WarmUpProperties();
        WarmUp core = WarmUp.builder().build();

        assertThat(warmUp.getConcurrency()).isEqualTo(core.concurrency());
        assertThat(warmUp.getDeadline()).isEqualTo(core.deadline());
        assertThat(warmUp.getTimeLimit()).isEqualTo(core.timeLimit());
    }
}
