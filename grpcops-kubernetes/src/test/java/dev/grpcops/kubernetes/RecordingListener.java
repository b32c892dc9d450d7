package dev.grpcops.kubernetes;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** What a resolver reported, per target. */
final class RecordingListener implements ResolverListener {

    final Map<String, Integer> endpoints = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> watchErrors = new ConcurrentHashMap<>();
    final Map<String, Boolean> closed = new ConcurrentHashMap<>();

    @Override
    public void endpoints(String target, int ready) {
        endpoints.put(target, ready);
    }

    @Override
    public void watchError(String target, Throwable cause) {
        watchErrors.computeIfAbsent(target, t -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void closed(String target) {
        closed.put(target, true);
    }

    int errors(String target) {
        AtomicInteger errors = watchErrors.get(target);
        return errors == null ? 0 : errors.get();
    }
}
