package dev.grpcops.admission;

import dev.grpcops.ServerStack;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * A hop behind a {@link ServerStack}, a real gRPC server (in-process, direct executor) whose Checks
 * the test serves, and the downstream server it calls, whose Checks the test answers. The hop's
 * calls go downstream through a channel counted by a cancellation budget on the test's fake clock,
 * as the services' channels do. Close it after the test.
 */
final class HopWithDownstream implements AutoCloseable {

    /** A Check that reached the hop's handler, in the context to call downstream in. */
    record Arrived(StreamObserver<CheckReply> reply, Context context) {}

    private final Queue<Arrived> arrived = new ConcurrentLinkedQueue<>();
    private final Queue<StreamObserver<CheckReply>> downstreamHeld = new ConcurrentLinkedQueue<>();
    private final Server downstream;
    private final ManagedChannel toDownstream;
    private final Server hop;
    private final ManagedChannel toHop;

    HopWithDownstream(ServerStack stack, FakeClock clock) throws IOException {
        String downstreamName = InProcessServerBuilder.generateName();
        downstream = InProcessServerBuilder.forName(downstreamName)
                .directExecutor()
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                        downstreamHeld.add(reply);
                    }
                })
                .build()
                .start();
        toDownstream = InProcessChannelBuilder.forName(downstreamName)
                .directExecutor()
                .intercept(CancellationBudget.builder()
                        .nanoClock(clock.nanoClock())
                        .scheduler(clock.scheduler())
                        .build())
                .build();
        String hopName = InProcessServerBuilder.generateName();
        hop = InProcessServerBuilder.forName(hopName)
                .directExecutor()
                .addService(stack.intercept(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                        arrived.add(new Arrived(reply, Context.current()));
                    }
                }))
                .build()
                .start();
        toHop = InProcessChannelBuilder.forName(hopName).directExecutor().build();
    }

    /** The callers' channel to the hop. */
    ManagedChannel toHop() {
        return toHop;
    }

    /** The hop's channel downstream; call it in an {@link Arrived}'s context. */
    ManagedChannel toDownstream() {
        return toDownstream;
    }

    /** The hop's Checks, held until the test serves them. */
    Queue<Arrived> arrived() {
        return arrived;
    }

    /** The downstream server's Checks, held until the test answers them. */
    Queue<StreamObserver<CheckReply>> downstreamHeld() {
        return downstreamHeld;
    }

    @Override
    public void close() throws InterruptedException {
        downstream.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        toDownstream.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        hop.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        toHop.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
