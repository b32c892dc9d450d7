package dev.grpcops.internal;

import io.grpc.Context;
import io.grpc.ServerCall;

/**
 * A server call listener that runs every callback, and the start of the handler, in one
 * {@link Context} of its own, as {@link io.grpc.Contexts#interceptCall} does. An interceptor further
 * out whose context values that context already carries need not attach its own around every
 * callback as well: attaching a context costs each callback, and calls have several.
 */
public interface ContextAttachingListener {

    /** The context every callback of this listener runs in. */
    Context attachedContext();

    /** The listener {@code listener} is, when it attaches a context, else null. */
    static Context attachedContextOf(ServerCall.Listener<?> listener) {
        return listener instanceof ContextAttachingListener attaching ? attaching.attachedContext() : null;
    }
}
