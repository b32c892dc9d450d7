package dev.grpcops.server;

import dev.grpcops.internal.RateLimitedLog;
import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import java.io.InputStream;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.LoggerFactory;

/**
 * The server's answer to a method it does not serve: {@code UNIMPLEMENTED}, as grpc-java's own,
 * but counted once, under no name. Install it as the server's fallback registry so that a client
 * calling thousands of made-up names cannot make a metric series (or a log line) per name.
 */
public final class UnknownMethods extends HandlerRegistry {

    private final Runnable onUnknown;

    /** @param onUnknown told of each call to a method the server does not serve (a counter); must not block */
    public UnknownMethods(Runnable onUnknown) {
        this.onUnknown = Objects.requireNonNull(onUnknown, "onUnknown");
    }

    /**
     * As {@link #UnknownMethods(Runnable)}, and a WARN line at most once per {@code logInterval},
     * with how many such calls came since the last one.
     */
    public UnknownMethods(Runnable onUnknown, Duration logInterval) {
        Objects.requireNonNull(onUnknown, "onUnknown");
        RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(UnknownMethods.class), logInterval);
        this.onUnknown = () -> {
            onUnknown.run();
            log.warn("calls to methods this server does not serve: answered UNIMPLEMENTED");
        };
    }

    @Override
    public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
        MethodDescriptor<InputStream, InputStream> method = MethodDescriptor.<InputStream, InputStream>newBuilder()
                .setType(MethodDescriptor.MethodType.UNKNOWN)
                .setFullMethodName(methodName)
                .setRequestMarshaller(RawMessages.INSTANCE)
                .setResponseMarshaller(RawMessages.INSTANCE)
                .build();
        return ServerMethodDefinition.create(method, (call, headers) -> {
            onUnknown.run();
            call.close(
                    Status.UNIMPLEMENTED.withDescription("Method not found: " + truncated(methodName)), new Metadata());
            return new ServerCall.Listener<>() {};
        });
    }

    /** A made-up name may be long; the status message need not repeat all of it. */
    private static String truncated(String name) {
        return name.length() <= 200 ? name : name.substring(0, 200) + "…";
    }
}
