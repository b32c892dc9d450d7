package dev.grpcops.bench;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;

/**
 * Waits, within a bound, until each given server answers one real call: Stock a Check, Pricing a
 * Quote, Edge a Checkout (the hand-written chain has no health service). Exit 0 when all did,
 * 1 naming the first that did not in time.
 */
final class Await {

    private Await() {}

    static int main(String[] args) throws InterruptedException {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: await SECONDS ROLE=TARGET...");
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[0]));
        for (int i = 1; i < args.length; i++) {
            String[] roleTarget = args[i].split("=", 2);
            if (roleTarget.length != 2) {
                throw new IllegalArgumentException("not ROLE=TARGET: " + args[i]);
            }
            if (!await(roleTarget[0], roleTarget[1], end)) {
                return 1;
            }
        }
        return 0;
    }

    private static boolean await(String role, String target, long end) throws InterruptedException {
        ManagedChannel channel = Servers.channel(target);
        try {
            Status last;
            do {
                last = call(role, channel);
                if (last.isOk()) {
                    System.out.println("bench " + role + " at " + target + " answers");
                    return true;
                }
                Thread.sleep(200);
            } while (System.nanoTime() < end);
            System.err.println("bench " + role + " at " + target + " did not answer in time; last: " + last);
            return false;
        } finally {
            channel.shutdownNow();
        }
    }

    private static Status call(String role, ManagedChannel channel) {
        try {
            switch (role) {
                case "stock" ->
                    StockGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(CheckRequest.newBuilder().setSku("await").build());
                case "pricing" ->
                    PricingGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .quote(QuoteRequest.newBuilder().setSku("await").build());
                case "edge" -> {
                    var reply = EdgeGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .checkout(CheckoutRequest.newBuilder()
                                    .addSkus("await")
                                    .build());
                    if (!reply.getLines(0).getAvailable()) {
                        return Status.UNAVAILABLE.withDescription(
                                "line unavailable: " + reply.getLines(0).getReason());
                    }
                }
                default -> throw new IllegalArgumentException("unknown role: " + role);
            }
            return Status.OK;
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException) {
                throw e;
            }
            return Status.fromThrowable(e);
        }
    }
}
