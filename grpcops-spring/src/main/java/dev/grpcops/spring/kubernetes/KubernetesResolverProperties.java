package dev.grpcops.spring.kubernetes;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code kubernetes:///} name resolver, under {@code grpcops.kubernetes}. */
@ConfigurationProperties("grpcops.kubernetes")
public class KubernetesResolverProperties {

    /** Register the resolver with metrics (grpc_resolver_*); false leaves the plain one ServiceLoader registers. */
    private boolean enabled = true;

    /**
     * How long the resolver first waits before it watches again after losing the API server; each
     * failed attempt doubles it, up to 32 times this. The endpoints it had stay in use meanwhile.
     */
    private Duration watchReconnectInterval = Duration.ofSeconds(1);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getWatchReconnectInterval() {
        return watchReconnectInterval;
    }

    public void setWatchReconnectInterval(Duration watchReconnectInterval) {
        if (watchReconnectInterval.toMillis() < 1 || watchReconnectInterval.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException(
                    "grpcops.kubernetes.watch-reconnect-interval must be 1 ms to 1 min, got " + watchReconnectInterval);
        }
        this.watchReconnectInterval = watchReconnectInterval;
    }
}
