package dev.grpcops.bench;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** A plain Netty server on loopback and a plain channel, both with direct executors. */
final class Servers {

    private Servers() {}

    /**
     * Serves {@code service} on 127.0.0.1:{@code port} until the process is told to stop
     * (SIGTERM/SIGINT). Direct executor: every handler of this chain returns at once (a delay is
     * a scheduled task, a downstream call a future), so calls run on the transport's threads.
     */
    static void serve(String name, int port, BindableService service, Runnable onStop)
            throws IOException, InterruptedException {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .directExecutor()
                .addService(service)
                .build()
                .start();
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.shutdown();
                            try {
                                if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                                    server.shutdownNow();
                                }
                            } catch (InterruptedException e) {
                                server.shutdownNow();
                                Thread.currentThread().interrupt();
                            }
                            onStop.run();
                        },
                        name + "-stop"));
        System.out.println("bench " + name + " listening on 127.0.0.1:" + server.getPort());
        System.out.flush();
        server.awaitTermination();
    }

    /** A plaintext channel to {@code target} (host:port or any gRPC target), callbacks on the transport's threads. */
    static ManagedChannel channel(String target) {
        return NettyChannelBuilder.forTarget(target)
                .usePlaintext()
                .directExecutor()
                .build();
    }

    static int port(String value) {
        try {
            int port = Integer.parseInt(value);
            if (port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a port: " + value);
        }
    }
}
