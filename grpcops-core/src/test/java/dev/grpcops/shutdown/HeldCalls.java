package dev.grpcops.shutdown;

import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A WhoAmI whose calls stay open until the test answers them, one by one. */
final class HeldCalls extends WhoAmIGrpc.WhoAmIImplBase {

    private final String pod;
    private final BlockingQueue<StreamObserver<WhoReply>> held = new LinkedBlockingQueue<>();

    HeldCalls(String pod) {
        this.pod = pod;
    }

    @Override
    public void who(WhoRequest request, StreamObserver<WhoReply> responses) {
        held.add(responses);
    }

    int held() {
        return held.size();
    }

    /** Answers the oldest call held, waiting for one to arrive if need be. */
    void answerOne() throws InterruptedException {
        StreamObserver<WhoReply> call = held.poll(10, TimeUnit.SECONDS);
        if (call == null) {
            throw new AssertionError("no call arrived at " + pod);
        }
        call.onNext(WhoReply.newBuilder().setPod(pod).build());
        call.onCompleted();
    }
}
