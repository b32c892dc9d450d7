package dev.grpcops.spring.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.client.ServiceConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.client.balancing.*} left unset is the core's balancing (the properties keep literal
 * values so that the generated metadata, and the docs' defaults, show them).
 */
@Timeout(30)
class ClientPropertiesDefaultsTests {

    @Test
    void unsetBalancingPropertiesGiveTheCoresServiceConfig() {
        assertThat(new ChannelServiceConfigs(new ClientProperties()).serviceConfig("any"))
                .isEqualTo(ServiceConfigs.builder().build());
    }

    @Test
    void unsetOutlierDetectionAndCancellationPropertiesAreTheCoresDefaults() {
        ClientProperties properties = new ClientProperties();
        ClientProperties.OutlierDetection outliers = properties.getOutlierDetection();
        dev.grpcops.client.OutlierDetection core = dev.grpcops.client.OutlierDetection.DEFAULTS;

        assertThat(properties.getCancellationsPerSecond()).isEqualTo((int)
                dev.grpcops.client.CancellationBudget.builder().build().perSecond());
        assertThat(outliers.getInterval()).isEqualTo(core.interval());
        assertThat(outliers.getBaseEjectionTime()).isEqualTo(core.baseEjectionTime());
        assertThat(outliers.getMaxEjectionTime()).isEqualTo(core.maxEjectionTime());
        assertThat(outliers.getMaxEjectionPercent()).isEqualTo(core.maxEjectionPercent());
        assertThat(outliers.getFailurePercentage()).isEqualTo(core.failurePercentage());
        assertThat(outliers.getMinimumHosts()).isEqualTo(core.minimumHosts());
        assertThat(outliers.getRequestVolume()).isEqualTo(core.requestVolume());
    }
}
