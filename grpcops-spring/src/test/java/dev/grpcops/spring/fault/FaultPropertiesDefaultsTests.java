package dev.grpcops.spring.fault;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.fault.Faults;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code grpcops.fault.*} left unset injects nothing: the core's {@link Faults#NONE}. */
@Timeout(30)
class FaultPropertiesDefaultsTests {

    @Test
    void unsetFaultPropertiesGiveTheCoresNone() {
        assertThat(new FaultProperties().toFaults()).isEqualTo(Faults.NONE);
    }
}
