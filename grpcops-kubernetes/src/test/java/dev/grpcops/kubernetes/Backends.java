package dev.grpcops.kubernetes;

import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.Attributes;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Real gRPC servers on 127.0.0.2, .3, .4 (loopback is all of 127/8), one port for all of them as
 * pods of one Deployment share theirs, each answering WhoAmI.Who with its IP and serving health.
 * Each counts the calls it answered, the connections it accepted and those that closed.
 */
final class Backends implements AutoCloseable {

    static final List<String> IPS = List.of("127.0.0.2", "127.0.0.3", "127.0.0.4");

    private final Map<String, Server> servers = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> calls = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> connections = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> closed = new LinkedHashMap<>();
    private final Map<String, HealthStatusManager> health = new LinkedHashMap<>();
    final int port;

    /** @param maxConnectionAge null: connections live for ever */
    Backends(Duration maxConnectionAge) {
        int port = 0;
        for (String ip : IPS) {
            calls.put(ip, new AtomicInteger());
            connections.put(ip, new AtomicInteger());
            closed.put(ip, new AtomicInteger());
            Server server = start(ip, port, maxConnectionAge);
            servers.put(ip, server);
            port = server.getPort();
        }
        this.port = port;
    }

    private Server start(String ip, int port, Duration maxConnectionAge) {
        HealthStatusManager health = new HealthStatusManager();
        this.health.put(ip, health);
        health.setStatus(WhoAmIGrpc.SERVICE_NAME, io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        AtomicInteger served = calls.get(ip);
        AtomicInteger accepted = connections.get(ip);
        AtomicInteger ended = closed.get(ip);
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(ip, port))
                .addService(health.getHealthService())
                .addService(new WhoAmIGrpc.WhoAmIImplBase() {
                    @Override
                    public void who(WhoRequest request, StreamObserver<WhoReply> reply) {
                        served.incrementAndGet();
                        reply.onNext(WhoReply.newBuilder().setPod(ip).build());
                        reply.onCompleted();
                    }
                })
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes attributes) {
                        accepted.incrementAndGet();
                        return attributes;
                    }

                    @Override
                    public void transportTerminated(Attributes attributes) {
                        ended.incrementAndGet();
                    }
                });
        if (maxConnectionAge != null) {
            builder.maxConnectionAge(maxConnectionAge.toMillis(), TimeUnit.MILLISECONDS)
                    .maxConnectionAgeGrace(5, TimeUnit.SECONDS);
        }
        try {
            return builder.build().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + ip + ":" + port, e);
        }
    }

    /** The pod reports NOT_SERVING for WhoAmI, as one does while it drains. */
    void drain(String ip) {
        health.get(ip)
                .setStatus(WhoAmIGrpc.SERVICE_NAME, io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING);
    }

    int calls(String ip) {
        return calls.get(ip).get();
    }

    int connections(String ip) {
        return connections.get(ip).get();
    }

    /** Connections to {@code ip} that have closed (aged out, or closed by the client). */
    int closedConnections(String ip) {
        return closed.get(ip).get();
    }

    @Override
    public void close() throws InterruptedException {
        List<Server> all = new ArrayList<>(servers.values());
        all.forEach(Server::shutdownNow);
        for (Server server : all) {
            server.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
