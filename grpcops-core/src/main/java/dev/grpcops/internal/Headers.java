package dev.grpcops.internal;

import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;

/** The gRPC metadata keys the library reads and writes in more than one place. */
public final class Headers {

    /** Sent on a retry or hedge attempt (gRFC A6); a call that arrives with it is not retried further down. */
    public static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    /** A server's answer to "may I retry": negative or unparsable means no, n ≥ 0 means after n ms (gRFC A6). */
    public static final Metadata.Key<String> RETRY_PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    private Headers() {}

    /** {@code call}, sending {@code key: value} (in place of any value already there) when it starts. */
    public static <ReqT, RespT> ClientCall<ReqT, RespT> sending(
            ClientCall<ReqT, RespT> call, Metadata.Key<String> key, String value) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
            @Override
            public void start(Listener<RespT> listener, Metadata headers) {
                headers.discardAll(key);
                headers.put(key, value);
                super.start(listener, headers);
            }
        };
    }

    /** Any value but a plain 0 counts: a hop that cannot tell must not retry on top of another. */
    public static boolean arrivedAsRetry(Metadata headers) {
        Iterable<String> values = headers.getAll(PREVIOUS_ATTEMPTS);
        if (values == null) {
            return false;
        }
        for (String value : values) {
            if (!value.trim().equals("0")) {
                return true;
            }
        }
        return false;
    }
}
