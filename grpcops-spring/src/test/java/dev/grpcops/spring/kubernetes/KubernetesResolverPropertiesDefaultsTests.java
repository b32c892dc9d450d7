package dev.grpcops.spring.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.kubernetes.*} configures fabric8's client for the {@code kubernetes:///} resolver:
 * left unset, the watch reconnects as fabric8 does by default, and the resolver is there.
 */
@Timeout(30)
class KubernetesResolverPropertiesDefaultsTests {

    @Test
    void unsetPropertiesKeepFabric8sWatchReconnectInterval() {
        KubernetesResolverProperties properties = new KubernetesResolverProperties();

        assertThat(properties.isEnabled()).isTrue();
        assertThat(properties.getWatchReconnectInterval().toMillis())
                .isEqualTo((long) new ConfigBuilder(Config.empty()).build().getWatchReconnectInterval());
    }
}
