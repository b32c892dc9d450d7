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
        // A delayed reply needs a place among the pending ones; without one the call is refused
        // (RESOURCE_EXHAUSTED) before it is recorded, like input refused as invalid: it was not served.
        DelayedReplies.Slot slot = request.getDelayMs() == 0 ? null : replies.reserve();
        long callNumber = log.record(sku, Context.current().getDeadline());
        if (sku.startsWith(FLAKY_PREFIX) && callNumber == 1) {
            if (slot != null) {
                slot.release();
            }
            throw Status.UNAVAILABLE
                    .withDescription("stock: " + sku + " fails its first call (flaky- SKU)")
                    .asRuntimeException();
        }
        CheckReply reply = CheckReply.newBuilder()
                .setSku(sku)
                .setQty(Inventory.quantity(sku))
                .build();
        if (slot == null) {
            send(responses, reply);
            return;
        }
        ServerCallStreamObserver<CheckReply> call = (ServerCallStreamObserver<CheckReply>) responses;
        // Deadline passed or caller cancelled: drop the reply instead of holding it for nobody, and
        // free its place. Set before scheduling, so that no cancellation can slip in between.
        call.setOnCancelHandler(slot::cancel);
        slot.schedule(Duration.ofMillis(request.getDelayMs()), () -> send(call, reply));
    }

    @Override
    public void stats(StatsRequest request, StreamObserver<StatsReply> responses) {
        if (!request.getSku().isEmpty()) {
            // One SKU: paging does not apply.
            ChainInput.sku("sku", request.getSku());
            send(
                    responses,
                    StatsReply.newBuilder().addSkus(log.stats(request.getSku())).build());
            return;
        }
        int pageSize = StatsPaging.pageSize(request.getPageSize());
        String after = StatsPaging.after(request.getPageToken());
        CallLog.Page page = log.page(after, pageSize, CallLog.MAX_PAGE_BYTES);
        StatsReply.Builder reply = StatsReply.newBuilder().addAllSkus(page.skus());
        if (page.more()) {
            reply.setNextPageToken(
                    StatsPaging.token(page.skus().get(page.skus().size() - 1).getSku()));
        }
        send(responses, reply.build());
    }

    private static <T> void send(StreamObserver<T> responses, T reply) {
        responses.onNext(reply);
        responses.onCompleted();
    }
}
