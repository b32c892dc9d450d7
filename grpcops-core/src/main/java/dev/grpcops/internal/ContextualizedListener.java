package dev.grpcops.internal;

import io.grpc.Context;
import io.grpc.ServerCall;
import java.util.function.Consumer;

/** Runs every callback of {@code delegate} in {@code context}, as {@link io.grpc.Contexts#interceptCall} does. */
public final class ContextualizedListener<ReqT> extends ServerCall.Listener<ReqT> implements ContextAttachingListener {

    private final Context context;
    private final ServerCall.Listener<ReqT> delegate;

    public ContextualizedListener(Context context, ServerCall.Listener<ReqT> delegate) {
        this.context = context;
        this.delegate = delegate;
    }

    @Override
    public Context attachedContext() {
        return context;
    }

    @Override
    public void onMessage(ReqT message) {
        Context previous = context.attach();
        try {
            delegate.onMessage(message);
        } finally {
            context.detach(previous);
        }
    }

    @Override
    public void onHalfClose() {
        inContext(ServerCall.Listener::onHalfClose);
    }

    @Override
    public void onCancel() {
        inContext(ServerCall.Listener::onCancel);
    }

    @Override
    public void onComplete() {
        inContext(ServerCall.Listener::onComplete);
    }

    @Override
    public void onReady() {
        inContext(ServerCall.Listener::onReady);
    }

    /** Takes non-capturing method references: nothing is allocated per callback. */
    private void inContext(Consumer<ServerCall.Listener<ReqT>> callback) {
        Context previous = context.attach();
        try {
            callback.accept(delegate);
        } finally {
            context.detach(previous);
        }
    }
}
