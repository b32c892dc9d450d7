package dev.grpcops.autoconfigure.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** How outgoing channels balance and recover, under {@code grpcops.client}. */
@ConfigurationProperties("grpcops.client")
public class ClientProperties {

    /**
     * Channels (by net.devh client name) that use round_robin over every resolved address and
     * skip addresses whose health, for the given service name, is not SERVING. Example:
     * grpcops.client.health-checked.stock=chain.v1.Stock
     */
    private Map<String, String> healthChecked = new LinkedHashMap<>();

    /**
     * How often a channel that cannot reach any address retries at once instead of waiting out
     * gRPC's growing reconnect backoff, so that a backend that comes back is used within about
     * this long. Zero or negative leaves gRPC's backoff alone.
     */
    private Duration reconnectInterval = Duration.ofMillis(500);

    /**
     * Run the callbacks of every channel's calls on the transport's own threads instead of an
     * executor (grpc-java's directExecutor). Only for code whose callbacks never block.
     */
    private boolean directExecutor;

    public boolean isDirectExecutor() {
        return directExecutor;
    }

    public void setDirectExecutor(boolean directExecutor) {
        this.directExecutor = directExecutor;
    }

    public Map<String, String> getHealthChecked() {
        return healthChecked;
    }

    public void setHealthChecked(Map<String, String> healthChecked) {
        this.healthChecked = healthChecked;
    }

    public Duration getReconnectInterval() {
        return reconnectInterval;
    }

    public void setReconnectInterval(Duration reconnectInterval) {
        this.reconnectInterval = reconnectInterval;
    }
}
