package dev.grpcops.budget.internal;

import io.grpc.ClientCall;
import io.grpc.Metadata;

/** A call that never reaches the network: it closes with its status as soon as it starts. */
final class NotSentCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    private final io.grpc.Status status;

    NotSentCall(io.grpc.Status status) {
        this.status = status;
    }

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
        listener.onClose(status, new Metadata());
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(String message, Throwable cause) {}

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(ReqT message) {}
}
