package dev.grpcops.autoconfigure.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.client.PeakEwmaLoadBalancerProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.client.balancing.*} left unset is the core's balancing (the properties keep literal
 * values so that the generated metadata, and the docs' defaults, show them).
 */
@Timeout(30)
class ClientPropertiesDefaultsTests {

    @Test
    void unsetBalancingPropertiesAreTheCoresDefaults() {
        ClientProperties.Balancing balancing = new ClientProperties().getBalancing();

        assertThat(balancing.getDecay()).isEqualTo(PeakEwmaLoadBalancerProvider.DEFAULT_DECAY);
        assertThat(balancing.getFailurePenalty()).isEqualTo(PeakEwmaLoadBalancerProvider.DEFAULT_FAILURE_PENALTY);
        assertThat(balancing.getCompareAllUpTo()).isEqualTo(PeakEwmaLoadBalancerProvider.DEFAULT_COMPARE_ALL_UP_TO);
        assertThat(balancing.getSlowStart()).isEqualTo(PeakEwmaLoadBalancerProvider.DEFAULT_SLOW_START);
    }

    @Test
    void unsetOutlierDetectionAndCancellationPropertiesAreTheCoresDefaults() {
        ClientProperties properties = new ClientProperties();
        ClientProperties.OutlierDetection outliers = properties.getOutlierDetection();
        dev.grpcops.client.OutlierDetection core = dev.grpcops.client.OutlierDetection.DEFAULTS;

        assertThat(properties.getCancellationsPerSecond())
                .isEqualTo(dev.grpcops.client.CancellationBudget.DEFAULT_PER_SECOND);
        assertThat(outliers.getInterval()).isEqualTo(core.interval());
        assertThat(outliers.getBaseEjectionTime()).isEqualTo(core.baseEjectionTime());
        assertThat(outliers.getMaxEjectionTime()).isEqualTo(core.maxEjectionTime());
        assertThat(outliers.getMaxEjectionPercent()).isEqualTo(core.maxEjectionPercent());
        assertThat(outliers.getFailurePercentage()).isEqualTo(core.failurePercentage());
        assertThat(outliers.getMinimumHosts()).isEqualTo(core.minimumHosts());
        assertThat(outliers.getRequestVolume()).isEqualTo(core.requestVolume());
    }
}
