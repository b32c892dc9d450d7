package dev.grpcops.spring.client;

import io.grpc.ManagedChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * What a channel configurer put on a channel's builder and must then follow the channel it made
 * (its readiness gate, its cancellation budget), by channel name: the configurers register, the
 * channel factory hands each channel it made to {@link #follow}.
 */
public final class ChannelFollowers {

    private final Map<String, List<Consumer<ManagedChannel>>> followers = new ConcurrentHashMap<>();

    /** {@code follower} is given the channel named {@code name} once it is made. */
    public void add(String name, Consumer<ManagedChannel> follower) {
        followers.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>()).add(follower);
    }

    /** The channel named {@code name} was made: whatever its builder was given follows it. */
    public void follow(String name, ManagedChannel channel) {
        List<Consumer<ManagedChannel>> forChannel = followers.remove(name);
        if (forChannel != null) {
            forChannel.forEach(follower -> follower.accept(channel));
        }
    }
}
