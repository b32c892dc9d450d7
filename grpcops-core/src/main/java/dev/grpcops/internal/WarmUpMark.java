package dev.grpcops.internal;

import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Metadata;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Marks the calls a process sends itself to warm up (design §16): they carry this process's own token,
 * made at random when it starts and never shown, so that no caller can make its calls pass for
 * warm-up calls from outside. A served call that carries it runs in a context {@link #active()} says
 * is a warm-up, and the downstream calls it makes carry {@link #OPTION}, so that retries, hedging,
 * the balancers' statistics and tracing leave them out, whatever else is switched on or off. The
 * mark stays in the process: the next hop serves such a call as any other.
 */
public final class WarmUpMark {

    /** The header a warm-up call carries: this process's token. */
    public static final Metadata.Key<String> HEADER =
            Metadata.Key.of("grpcops-warm-up", Metadata.ASCII_STRING_MARSHALLER);

    /** Set on every call made while serving a warm-up call: balancers learn nothing from it. */
    public static final CallOptions.Key<Boolean> OPTION = CallOptions.Key.createWithDefault("grpcops-warm-up", false);

    private static final Context.Key<Boolean> KEY = Context.keyWithDefault("grpcops-warm-up", false);
    private static final String TOKEN = newToken();

    private WarmUpMark() {}

    private static String newToken() {
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** What this process's warm-up calls send in {@link #HEADER}. */
    public static String token() {
        return TOKEN;
    }

    /** Whether {@code headers} carry this process's token (compared in constant time). */
    public static boolean carriedBy(Metadata headers) {
        String value = headers.get(HEADER);
        return value != null
                && MessageDigest.isEqual(
                        value.getBytes(StandardCharsets.US_ASCII), TOKEN.getBytes(StandardCharsets.US_ASCII));
    }

    /** Whether the call being served now is one of this process's warm-up calls. */
    public static boolean active() {
        return KEY.get();
    }

    /** {@code context}, marked as serving a warm-up call. */
    public static Context attachTo(Context context) {
        return context.withValue(KEY, true);
    }
}
