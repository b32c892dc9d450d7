package dev.grpcops.systemtest;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * HAProxy in TCP mode, round-robin per connection: the connection-level (L4) balancing a
 * Kubernetes ClusterIP Service does. Installed by {@code scripts/install-deps.sh}.
 */
final class HaProxy implements AutoCloseable {

    final int port;
    private final Process process;

    private HaProxy(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    /** Starts HAProxy in front of {@code backends}; without HAProxy, skips the test (fails in CI). */
    static HaProxy inFrontOf(List<ServiceProcess> backends) {
        boolean installed = Files.isExecutable(Path.of("/usr/sbin/haproxy"));
        if (!installed && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("haproxy is missing: CI must install it (scripts/install-deps.sh)");
        }
        assumeTrue(installed, "haproxy is not installed (scripts/install-deps.sh installs it): L4 balancer tests skipped");
        int port = ServiceProcess.freePort("127.0.0.1");
        String servers = backends.stream()
                .map(b -> "  server " + b.name + " " + b.target())
                .collect(Collectors.joining("\n"));
        String config = String.join("\n",
                "global", "  maxconn 1024",
                "defaults", "  mode tcp", "  timeout connect 2s", "  timeout client 60s", "  timeout server 60s",
                "frontend clusterip", "  bind 127.0.0.1:" + port, "  default_backend pods",
                "backend pods", "  balance roundrobin", servers, "");
        try {
            Path file = Path.of("target/haproxy-" + port + ".cfg");
            Files.writeString(file, config);
            Process process = new ProcessBuilder("/usr/sbin/haproxy", "-db", "-f", file.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(Path.of("target/haproxy-" + port + ".log").toFile())
                    .start();
            HaProxy haProxy = new HaProxy(port, process);
            haProxy.awaitListening();
            return haProxy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String target() {
        return "127.0.0.1:" + port;
    }

    private void awaitListening() {
        long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < giveUp) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                ServiceProcess.sleep(Duration.ofMillis(100));
            }
        }
        close();
        throw new IllegalStateException("haproxy did not listen on " + port);
    }

    @Override
    public void close() {
        process.destroy();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
