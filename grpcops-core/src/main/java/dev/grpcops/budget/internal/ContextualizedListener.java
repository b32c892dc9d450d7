package dev.grpcops.budget.internal;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener;
import io.grpc.ServerCall;

/** Runs every callback of {@code delegate} in {@code context}, as {@link io.grpc.Contexts#interceptCall} does. */
final class ContextualizedListener<ReqT> extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {

    private final Context context;

    ContextualizedListener(Context context, ServerCall.Listener<ReqT> delegate) {
        super(delegate);
        this.context = context;
    }

    @Override
    public void onMessage(ReqT message) {
        Context previous = context.attach();
        try {
            super.onMessage(message);
        } finally {
            context.detach(previous);
        }
    }

    @Override
    public void onHalfClose() {
        Context previous = context.attach();
        try {
            super.onHalfClose();
        } finally {
            context.detach(previous);
        }
    }

    @Override
    public void onCancel() {
        Context previous = context.attach();
        try {
            super.onCancel();
        } finally {
            context.detach(previous);
        }
    }

    @Override
    public void onComplete() {
        Context previous = context.attach();
        try {
            super.onComplete();
        } finally {
            context.detach(previous);
        }
    }

    @Override
    public void onReady() {
        Context previous = context.attach();
        try {
            super.onReady();
        } finally {
            context.detach(previous);
        }
    }
}
