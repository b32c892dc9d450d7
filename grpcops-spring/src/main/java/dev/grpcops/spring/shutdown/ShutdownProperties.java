package dev.grpcops.spring.shutdown;

import dev.grpcops.InfrastructureServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Drain-before-stop (design §10), under {@code grpcops.shutdown}. The grace for calls in flight is
 * net.devh's {@code grpc.server.shutdown-grace-period}.
 */
@ConfigurationProperties("grpcops.shutdown")
public class ShutdownProperties {

    /** Whether a stopping service first reports NOT_SERVING and waits before it stops taking calls. */
    private boolean enabled = true;

    /**
     * How long the service keeps serving after it reports NOT_SERVING, so that readiness probes
     * and health-checking clients move traffic away first: at least the readiness probe's
     * periodSeconds x failureThreshold plus the time endpoints take to propagate (2 s x 1 + 3 s).
     */
    private Duration drainDelay = Duration.ofSeconds(5);

    /** Services whose calls are long-lived streams (health Watch): they do not hold up the stop, and are cancelled at the end. */
    private List<String> longLivedServices = new ArrayList<>(InfrastructureServices.NAMES);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getDrainDelay() {
        return drainDelay;
    }

    public void setDrainDelay(Duration drainDelay) {
        if (drainDelay == null || drainDelay.isNegative()) {
            throw new IllegalArgumentException("grpcops.shutdown.drain-delay must not be negative, got " + drainDelay);
        }
        this.drainDelay = drainDelay;
    }

    public List<String> getLongLivedServices() {
        return longLivedServices;
    }

    public void setLongLivedServices(List<String> longLivedServices) {
        this.longLivedServices = longLivedServices;
    }
}
