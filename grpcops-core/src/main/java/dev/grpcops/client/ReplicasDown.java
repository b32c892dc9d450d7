package dev.grpcops.client;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The library's balancers tell, per channel authority, how many of their replicas cannot be
 * reached now (TRANSIENT_FAILURE), so that the {@link ReconnectNudger} cuts gRPC's reconnect
 * backoff for them as it does for a channel with no replica at all: a replica back after a
 * restart, or whose network healed, is used again within a nudge interval, not after the 10–20 s
 * a backoff grown during its outage takes. Balancers and channels meet by authority only; two
 * channels to one authority are nudged together, which costs a reconnect attempt, nothing more.
 */
final class ReplicasDown {

    /** Per authority, per balancer, its replicas down now. */
    private static final Map<String, Map<Object, Integer>> DOWN = new ConcurrentHashMap<>();

    /** Told the authority whose balancer now has replicas down. */
    private static final CopyOnWriteArrayList<Consumer<String>> LISTENERS = new CopyOnWriteArrayList<>();

    private ReplicasDown() {}

    /** {@code balancer}, balancing {@code authority}, has {@code down} replicas that cannot be reached. */
    static void report(String authority, Object balancer, int down) {
        if (authority == null) {
            return;
        }
        if (down > 0) {
            Integer before = DOWN.computeIfAbsent(authority, a -> new ConcurrentHashMap<>())
                    .put(balancer, down);
            if (before == null) {
                LISTENERS.forEach(listener -> listener.accept(authority));
            }
        } else {
            DOWN.computeIfPresent(authority, (a, balancers) -> {
                balancers.remove(balancer);
                return balancers.isEmpty() ? null : balancers;
            });
        }
    }

    /** Whether a balancer of {@code authority} has a replica down now. */
    static boolean any(String authority) {
        return authority != null && DOWN.containsKey(authority);
    }

    static void listen(Consumer<String> listener) {
        LISTENERS.add(listener);
    }

    static void stopListening(Consumer<String> listener) {
        LISTENERS.remove(listener);
    }
}
