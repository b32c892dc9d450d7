package dev.grpcops.admission;

import io.grpc.MethodDescriptor;
import java.util.Objects;
import java.util.function.ToIntFunction;

/**
 * How many seats a call of a unary method takes at admission, read from its request: for a method
 * that fans out, the number of downstream calls it makes (as Kubernetes APF gives a LIST more seats).
 * Admission then reads the request before it admits the call, and charges the caller's fair queue
 * for every seat, so that one caller's fan-out, and the cancellations it brings downstream, stay
 * within its share.
 *
 * <pre>{@code
 * CallWidth<CheckoutRequest> width = CallWidth.of(EdgeGrpc.getCheckoutMethod(), CheckoutRequest::getSkusCount);
 * AdmissionInterceptors.server(admission).width(width).build();
 * }</pre>
 */
public final class CallWidth<ReqT> {

    private final MethodDescriptor<ReqT, ?> method;
    private final ToIntFunction<ReqT> width;

    private CallWidth(MethodDescriptor<ReqT, ?> method, ToIntFunction<ReqT> width) {
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
            throw new IllegalArgumentException(
                    method.getFullMethodName() + " is not unary: its width cannot be read" + " from one request");
        }
        this.method = method;
        this.width = Objects.requireNonNull(width, "width");
    }

    /** Calls of {@code method} take {@code width(request)} seats (at least 1, at most the server's limit). */
    public static <ReqT> CallWidth<ReqT> of(MethodDescriptor<ReqT, ?> method, ToIntFunction<ReqT> width) {
        return new CallWidth<>(Objects.requireNonNull(method, "method"), width);
    }

    public String fullMethodName() {
        return method.getFullMethodName();
    }

    /** The seats {@code request} asks for; 1 when the function fails on it (a bad request is the handler's to refuse). */
    @SuppressWarnings("unchecked")
    public int of(Object request) {
        try {
            return Math.max(1, width.applyAsInt((ReqT) request));
        } catch (RuntimeException e) {
            return 1;
        }
    }
}
