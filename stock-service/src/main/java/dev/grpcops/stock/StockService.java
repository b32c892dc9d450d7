package dev.grpcops.stock;

import dev.grpcops.chain.ChainInput;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StatsReply;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import net.devh.boot.grpc.server.service.GrpcService;

@GrpcService
class StockService extends StockGrpc.StockImplBase {

    static final String FLAKY_PREFIX = "flaky-";

    private final CallLog log;
    private final DelayedReplies replies;

    StockService(CallLog log, DelayedReplies replies) {
        this.log = log;
        this.replies = replies;
    }

    @Override
    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
        ChainInput.check(request);
        String sku = request.getSku();
        long callNumber = log.record(sku, Context.current().getDeadline()).orElse(0L);
        if (sku.startsWith(FLAKY_PREFIX) && callNumber == 1) {
            responses.onError(Status.UNAVAILABLE
                    .withDescription("stock: " + sku + " fails its first call (flaky- SKU)").asRuntimeException());
            return;
        }
        CheckReply reply = CheckReply.newBuilder().setSku(sku).setQty(Inventory.quantity(sku)).build();
        if (request.getDelayMs() == 0) {
            send(responses, reply);
            return;
        }
        ServerCallStreamObserver<CheckReply> call = (ServerCallStreamObserver<CheckReply>) responses;
        ScheduledFuture<?> pending = replies.after(Duration.ofMillis(request.getDelayMs()), () -> send(call, reply));
        // Deadline passed or caller cancelled: drop the reply instead of holding it for nobody.
        call.setOnCancelHandler(() -> pending.cancel(false));
    }

    @Override
    public void stats(StatsRequest request, StreamObserver<StatsReply> responses) {
        StatsReply.Builder reply = StatsReply.newBuilder();
        if (request.getSku().isEmpty()) {
            reply.addAllSkus(log.all());
        } else {
            ChainInput.sku("sku", request.getSku());
            reply.addSkus(log.stats(request.getSku()));
        }
        send(responses, reply.build());
    }

    private static <T> void send(StreamObserver<T> responses, T reply) {
        responses.onNext(reply);
        responses.onCompleted();
    }
}
