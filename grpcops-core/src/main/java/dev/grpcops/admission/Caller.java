package dev.grpcops.admission;

import dev.grpcops.internal.PeerAddresses;
import io.grpc.Context;
import io.grpc.Metadata;
import java.net.SocketAddress;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Who a served call is for: the calling flow and the criticality admission granted it. It rides in
 * the call's {@link Context}, so the downstream calls made while serving carry the same
 * {@code x-grpcops-caller} and {@code x-grpcops-criticality} (design §9) and the next hop queues the
 * end caller, not this service.
 */
public final class Caller {

    public static final Metadata.Key<String> CALLER_KEY =
            Metadata.Key.of("x-grpcops-caller", Metadata.ASCII_STRING_MARSHALLER);
    public static final Metadata.Key<String> CRITICALITY_KEY =
            Metadata.Key.of("x-grpcops-criticality", Metadata.ASCII_STRING_MARSHALLER);

    static final Context.Key<Caller> KEY = Context.key("grpcops-caller");

    private final String named;
    private final SocketAddress peer;
    private final Criticality criticality;
    private String id;

    private Caller(String named, SocketAddress peer, Criticality criticality) {
        this.named = named;
        this.peer = peer;
        this.criticality = criticality;
    }

    /** A caller named by {@code x-grpcops-caller}, or, when {@code named} is null or blank, by the peer's address. */
    public static Caller of(String named, SocketAddress peer, Criticality criticality) {
        return new Caller(named == null || named.isBlank() ? null : named, peer, criticality);
    }

    /** The caller of the call being served on this thread's context, if admission classified one. */
    public static Optional<Caller> current() {
        return Optional.ofNullable(KEY.get());
    }

    /** The caller of the call served in {@code context}, or null when admission classified none. */
    public static @Nullable Caller in(Context context) {
        return KEY.get(context);
    }

    /** {@code context} carrying this caller. */
    public Context attachTo(Context context) {
        return context.withValue(KEY, this);
    }

    /** The flow's name: the caller's own, else the peer's IP address (computed only when asked). */
    public String id() {
        String result = id;
        if (result == null) {
            result = named != null ? named : PeerAddresses.ip(peer);
            id = result;
        }
        return result;
    }

    /** True when the caller named itself rather than being known by its address. */
    public boolean named() {
        return named != null;
    }

    public Criticality criticality() {
        return criticality;
    }

    @Override
    public String toString() {
        return "Caller[" + id() + ", " + criticality.value() + "]";
    }
}
