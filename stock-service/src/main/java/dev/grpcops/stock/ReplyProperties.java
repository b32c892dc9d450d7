package dev.grpcops.stock;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Bounds on the Check replies Stock holds while they wait out their {@code delay_ms}: each one is
 * a gRPC call kept open (a few KB of heap), so an unbounded number of them is an out-of-memory
 * error waiting for a client that asks for long delays.
 *
 * @param maxPendingReplies how many delayed replies may wait at once; a further Check with
 *        {@code delay_ms > 0} ends {@code RESOURCE_EXHAUSTED} (default 10000, about 40 MB of calls held)
 */
@ConfigurationProperties("stock")
record ReplyProperties(Integer maxPendingReplies) {

    ReplyProperties {
        maxPendingReplies = maxPendingReplies == null ? 10_000 : maxPendingReplies;
        if (maxPendingReplies < 1) {
            throw new IllegalArgumentException(
                    "stock.max-pending-replies must be at least 1, got " + maxPendingReplies);
        }
    }
}
