package dev.grpcops.systemtest;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * HAProxy in TCP mode, round-robin per connection: the connection-level (L4) balancing a
 * Kubernetes ClusterIP Service does. Installed by {@code scripts/install-deps.sh}.
 */
final class HaProxy implements AutoCloseable {

    final int port;
    private final Process process;
    private final Path log;

    private HaProxy(int port, Process process, Path log) {
        this.port = port;
        this.process = process;
        this.log = log;
    }

    /**
     * The haproxy binary: {@code -Dgrpcops.haproxy=PATH}, else the first on PATH, else
     * {@code /usr/sbin/haproxy} (Debian's, often not on a user's PATH). Without one the test is
     * skipped with a message on a developer machine, and fails when {@code CI=true}.
     */
    static Path requireInstalled() {
        Optional<Path> binary = find();
        if (binary.isEmpty() && Ci.isCi()) {
            throw new IllegalStateException("haproxy is missing, and CI=true: the L4 balancer tests must run in CI"
                    + " (scripts/install-deps.sh installs it)");
        }
        assumeTrue(
                binary.isPresent(),
                "haproxy is not installed (scripts/install-deps.sh installs it): L4 balancer tests skipped");
        return binary.get();
    }

    private static Optional<Path> find() {
        String configured = System.getProperty("grpcops.haproxy", "");
        if (!configured.isBlank()) {
            return Optional.of(Path.of(configured)).filter(Files::isExecutable);
        }
        return Stream.concat(
                        Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                                .filter(dir -> !dir.isBlank()),
                        Stream.of("/usr/sbin", "/usr/local/sbin"))
                .map(dir -> Path.of(dir, "haproxy"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /** Starts HAProxy in front of {@code backends}; see {@link #requireInstalled()} for a missing haproxy. */
    static HaProxy inFrontOf(List<ServiceProcess> backends) {
        Path binary = requireInstalled();
        int port = ServiceProcess.freePort("127.0.0.1");
        String servers = backends.stream()
                .map(b -> "  server " + b.name + " " + b.target())
                .collect(Collectors.joining("\n"));
        String config = String.join(
                "\n",
                "global",
                "  maxconn 1024",
                "defaults",
                "  mode tcp",
                "  timeout connect 2s",
                "  timeout client 60s",
                "  timeout server 60s",
                "frontend clusterip",
                "  bind 127.0.0.1:" + port,
                "  default_backend pods",
                "backend pods",
                "  balance roundrobin",
                servers,
                "");
        try {
            Path file = Path.of("target/haproxy-" + port + ".cfg");
            Path log = Path.of("target/haproxy-" + port + ".log");
            Files.writeString(file, config);
            Process process = new ProcessBuilder(binary.toString(), "-db", "-f", file.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            ChildProcesses.track(process);
            HaProxy haProxy = new HaProxy(port, process, log);
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
        try {
            await("haproxy listening on " + port)
                    .atMost(Duration.ofSeconds(10))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(100))
                    .failFast("haproxy exited, see " + log.toAbsolutePath(), () -> !process.isAlive())
                    .until(this::accepts);
        } catch (RuntimeException e) { // timed out, or haproxy exited
            close();
            throw new IllegalStateException("haproxy did not listen on " + port + ", see " + log.toAbsolutePath(), e);
        }
    }

    private boolean accepts() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException notYet) {
            return false;
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
