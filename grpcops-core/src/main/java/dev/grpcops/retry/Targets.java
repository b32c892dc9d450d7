package dev.grpcops.retry;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * State per downstream target, bounded: at most {@link #MAX} targets one by one, every further
 * one shares {@link #OVERFLOW}. Looking up a known target takes no lock; making one does, so that
 * concurrent first calls can never make more than the bound.
 */
final class Targets<S> {

    /** How many targets are tracked one by one. */
    static final int MAX = 64;
    /** The target that targets beyond {@link #MAX} share. */
    static final String OVERFLOW = "other";
    /** The target of attempts whose channel no attempt interceptor saw. */
    static final String UNKNOWN = "unknown";

    private final ConcurrentMap<String, S> states = new ConcurrentHashMap<>();
    private final Function<String, S> factory;
    private final BiConsumer<String, S> made;

    /** @param made told of each state once it is made, outside any lock of this map's */
    Targets(Function<String, S> factory, BiConsumer<String, S> made) {
        this.factory = factory;
        this.made = made;
    }

    /** The name a target's events are reported under: {@code unknown} when no attempt interceptor saw it. */
    static String name(String target) {
        return target == null ? UNKNOWN : target;
    }

    /** The name {@code target}'s state is kept under ({@link #OVERFLOW} past the bound), making it if new. */
    String key(String target) {
        String name = name(target);
        if (!states.containsKey(name)) {
            get(target);
        }
        return states.containsKey(name) ? name : OVERFLOW;
    }

    S get(String target) {
        String name = target == null ? UNKNOWN : target;
        S known = states.get(name);
        if (known != null) {
            return known;
        }
        S created;
        synchronized (this) {
            known = states.get(name);
            if (known != null) {
                return known;
            }
            String key = states.size() >= MAX && !name.equals(OVERFLOW) ? OVERFLOW : name;
            known = states.get(key);
            if (known != null) {
                return known;
            }
            created = factory.apply(key);
            states.put(key, created);
            name = key;
        }
        made.accept(name, created);
        return created;
    }

    List<String> names() {
        return List.copyOf(states.keySet());
    }
}
