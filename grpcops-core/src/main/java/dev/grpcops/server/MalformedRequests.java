package dev.grpcops.server;

import dev.grpcops.internal.RateLimitedLog;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import org.slf4j.LoggerFactory;

/**
 * A request that does not parse as its message type ends its call with {@code INVALID_ARGUMENT},
 * the service keeps serving, and nothing reaches the handler. grpc-java on its own answers
 * {@code UNKNOWN "Application error processing RPC"} and logs a stack trace per request, so a few
 * thousand garbage requests fill the log.
 *
 * <p>{@link #guard} rewrites a service definition so that requests arrive as raw bytes and are
 * parsed here, where a failure can be answered; everything else about the call is unchanged.
 */
public final class MalformedRequests {

    private MalformedRequests() {}

    /**
     * {@code onMalformed}, and a WARN line at most once per {@code logInterval} naming the method
     * and the failure, with how many malformed requests came since the last one: for {@link #guard}.
     */
    public static BiConsumer<String, RuntimeException> logged(
            Duration logInterval, BiConsumer<String, RuntimeException> onMalformed) {
        Objects.requireNonNull(onMalformed, "onMalformed");
        RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(MalformedRequests.class), logInterval);
        return (method, failure) -> {
            onMalformed.accept(method, failure);
            log.warn("undecodable request for " + method + " answered INVALID_ARGUMENT: " + failure.getMessage());
        };
    }

    /**
     * {@code service} with every method's request parsed by this class.
     *
     * @param onMalformed told the full method name and the parse failure of each malformed request
     *     (for a metric and a rate-limited log line); runs on the call's thread, must not block
     */
    public static ServerServiceDefinition guard(
            ServerServiceDefinition service, BiConsumer<String, RuntimeException> onMalformed) {
        ServiceDescriptor original = service.getServiceDescriptor();
        List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
        ServiceDescriptor.Builder descriptor =
                ServiceDescriptor.newBuilder(original.getName()).setSchemaDescriptor(original.getSchemaDescriptor());
        for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
            ServerMethodDefinition<?, ?> parsedHere = guard(method, onMalformed);
            methods.add(parsedHere);
            descriptor.addMethod(parsedHere.getMethodDescriptor());
        }
        // The schema kept, so that server reflection still describes the service.
        ServerServiceDefinition.Builder guarded = ServerServiceDefinition.builder(descriptor.build());
        methods.forEach(guarded::addMethod);
        return guarded.build();
    }

    private static <ReqT, RespT> ServerMethodDefinition<InputStream, RespT> guard(
            ServerMethodDefinition<ReqT, RespT> definition, BiConsumer<String, RuntimeException> onMalformed) {
        MethodDescriptor<ReqT, RespT> method = definition.getMethodDescriptor();
        MethodDescriptor<InputStream, RespT> wire = method.toBuilder(
                        RawMessages.INSTANCE, method.getResponseMarshaller())
                .build();
        ServerCallHandler<ReqT, RespT> handler = definition.getServerCallHandler();
        return ServerMethodDefinition.create(wire, (call, headers) -> {
            Parsed<ReqT, RespT> typedCall = new Parsed<>(call, method);
            ServerCall.Listener<ReqT> listener = handler.startCall(typedCall, headers);
            return new ParsingListener<>(listener, call, method, onMalformed);
        });
    }

    /** The call as the handler and the interceptors see it: typed requests, the original method. */
    private static final class Parsed<ReqT, RespT> extends ForwardingServerCall<ReqT, RespT> {

        private final ServerCall<InputStream, RespT> raw;
        private final MethodDescriptor<ReqT, RespT> method;

        Parsed(ServerCall<InputStream, RespT> raw, MethodDescriptor<ReqT, RespT> method) {
            this.raw = raw;
            this.method = method;
        }

        @Override
        @SuppressWarnings("unchecked")
        protected ServerCall<ReqT, RespT> delegate() {
            // Only the request type differs, and no method of ServerCall takes a request.
            return (ServerCall<ReqT, RespT>) (ServerCall<?, RespT>) raw;
        }

        @Override
        public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
            return method;
        }
    }

    private static final class ParsingListener<ReqT, RespT> extends ServerCall.Listener<InputStream> {

        private final ServerCall.Listener<ReqT> delegate;
        private final ServerCall<InputStream, RespT> call;
        private final MethodDescriptor<ReqT, RespT> method;
        private final BiConsumer<String, RuntimeException> onMalformed;
        private boolean refused;

        ParsingListener(
                ServerCall.Listener<ReqT> delegate,
                ServerCall<InputStream, RespT> call,
                MethodDescriptor<ReqT, RespT> method,
                BiConsumer<String, RuntimeException> onMalformed) {
            this.delegate = delegate;
            this.call = call;
            this.method = method;
            this.onMalformed = onMalformed;
        }

        @Override
        public void onMessage(InputStream message) {
            if (refused) {
                return;
            }
            ReqT request;
            try {
                request = method.parseRequest(message);
            } catch (RuntimeException malformed) {
                refused = true;
                onMalformed.accept(method.getFullMethodName(), malformed);
                call.close(
                        Status.INVALID_ARGUMENT.withDescription(
                                "request is not a valid " + method.getFullMethodName() + " request: it does not parse"),
                        new Metadata());
                return;
            }
            delegate.onMessage(request);
        }

        @Override
        public void onHalfClose() {
            if (!refused) {
                delegate.onHalfClose();
            }
        }

        @Override
        public void onCancel() {
            delegate.onCancel();
        }

        @Override
        public void onComplete() {
            delegate.onComplete();
        }

        @Override
        public void onReady() {
            if (!refused) {
                delegate.onReady();
            }
        }
    }
}
