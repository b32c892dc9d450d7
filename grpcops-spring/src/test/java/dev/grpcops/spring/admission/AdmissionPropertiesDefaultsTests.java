package dev.grpcops.spring.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admission.AdaptiveLimit;
import dev.grpcops.admission.AdmissionConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The properties' defaults are the core's: {@code grpcops.admission.*} left unset gives what {@link
 * AdmissionConfig#builder()} gives a plain grpc-java server. (The properties keep literal values so
 * that the generated metadata, and the docs' defaults, show them.)
 */
@Timeout(30)
class AdmissionPropertiesDefaultsTests {

    @Test
    void unsetPropertiesGiveTheCoresDefaults() {
        assertThat(new AdmissionProperties().toConfig())
                .isEqualTo(AdmissionConfig.builder().build());
    }

    @Test
    void unsetAdaptivePropertiesGiveTheCoresDefaults() {
        AdmissionProperties properties = new AdmissionProperties();
        assertThat(properties.getAdaptive().toLimit())
                .isEqualTo(AdaptiveLimit.builder().build());

        properties.getAdaptive().setEnabled(true);
        assertThat(properties.toConfig().adaptiveLimit())
                .isEqualTo(AdaptiveLimit.builder().build());
    }
}
