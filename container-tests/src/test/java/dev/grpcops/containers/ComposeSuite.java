package dev.grpcops.containers;

import static org.awaitility.Awaitility.await;

import dev.grpcops.cli.HealthProbe;
import dev.grpcops.testsupport.OtlpReceiver;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * docker-compose.yml as users bring it up, once for every container test of a run: the images built
 * from deploy/Dockerfile, three Stock and two Pricing replicas, Edge, three WhoAmI replicas and
 * Prometheus. container-tests/compose-test.yml adds what a test needs to look from outside (ports
 * published on loopback for the replicas and management ports Compose keeps internal, the traces sent
 * to a receiver in this JVM) and what brings the suite up sooner on a small machine (health checks
 * every 2 s where Compose's start order or a test waits on Docker's view, warm-ups cut to 2 s, the
 * replicas off the start-up path at a lower CPU weight). Brought down when the run's last test has
 * finished.
 */
final class ComposeSuite implements ExtensionContext.Store.CloseableResource {

    /** The admin token every service of the suite gets. */
    static final String ADMIN_TOKEN = "container-test-admin-token";

    static final String LEDGER_TOKEN = "container-test-ledger-token";

    private static final String PROJECT = "grpcops-it";

    /**
     * The replicas whose gRPC port the tests' Compose file publishes: the port in the container and the
     * service its readiness is the health of.
     */
    private static final Map<String, Map.Entry<Integer, String>> GRPC_PORTS = new LinkedHashMap<>();

    static {
        for (String stock : List.of("stock-1", "stock-2", "stock-3")) {
            GRPC_PORTS.put(stock, Map.entry(50061, "chain.v1.Stock"));
        }
        GRPC_PORTS.put("pricing-1", Map.entry(50062, "chain.v1.Pricing"));
        GRPC_PORTS.put("edge", Map.entry(50063, "chain.v1.Edge"));
        for (String whoami : List.of("whoami-1", "whoami-2", "whoami-3")) {
            GRPC_PORTS.put(whoami, Map.entry(50051, "grpcops.v1.WhoAmI"));
        }
    }

    private static ComposeSuite running;

    final OtlpReceiver traces;
    private final Map<String, String> environment;
    private final Map<String, String> ports = new HashMap<>();
    /** A container keeps its ID across stop and start; asking Compose costs a second of CPU each time. */
    private final Map<String, String> containers = new HashMap<>();

    private ComposeSuite(OtlpReceiver traces, Map<String, String> environment) {
        this.traces = traces;
        this.environment = environment;
    }

    /**
     * The suite, brought up by the first test that asks (minutes: it builds the images), and taken
     * down once the whole run is over.
     */
    static synchronized ComposeSuite get(ExtensionContext context) throws Exception {
        Docker.requireEngine();
        if (running == null) {
            running = up();
            context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).put(ComposeSuite.class, running);
        }
        return running;
    }

    /**
     * Gives a test's {@code @BeforeAll} method the suite: {@code @ExtendWith(ComposeSuite.Resolver.class)},
     * then {@code static void up(ComposeSuite suite)}.
     */
    static final class Resolver implements ParameterResolver {

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == ComposeSuite.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            try {
                return get(context);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("the Compose suite did not come up", e);
            }
        }
    }

    private static ComposeSuite up() throws Exception {
        String host = Docker.bridgeGateway();
        OtlpReceiver traces = new OtlpReceiver(host, 0);
        Map<String, String> environment = new HashMap<>();
        environment.put("GRPCOPS_ADMIN_TOKEN", ADMIN_TOKEN);
        environment.put("GRPCOPS_BUDGET_LEDGER_TOKEN", LEDGER_TOKEN);
        environment.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://host.docker.internal:" + traces.port());
        // The training run that makes each image's start-up cache is most of the build's time; the
        // tests check what the services do, not how fast they start.
        environment.put("AOT_TRAINING", "false");
        ComposeSuite suite = new ComposeSuite(traces, environment);
        String prometheus = Files.readString(Docker.ROOT.resolve("deploy/prometheus.yml"));
        Files.createDirectories(Path.of("target"));
        Files.writeString(
                Path.of("target/prometheus.yml"),
                prometheus.replaceAll("(?m)^(\\s*)(scrape|evaluation)_interval: .*$", "$1$2_interval: 2s"));
        try {
            // The four images side by side (no training run: AOT_TRAINING above), then the suite.
            suite.compose(Duration.ofMinutes(10), "build", "--parallel");
            suite.compose(Duration.ofMinutes(10), "up", "-d");
            suite.awaitServing(GRPC_PORTS.keySet().toArray(String[]::new));
            return suite;
        } catch (Exception | Error e) {
            suite.close();
            throw e;
        }
    }

    /** Where this machine reaches {@code service}'s {@code containerPort}: {@code 127.0.0.1:<published>}. */
    synchronized String address(String service, int containerPort) {
        return ports.computeIfAbsent(service + ":" + containerPort, key -> {
            String printed = run(
                    List.of("docker", "port", containerId(service), containerPort + "/tcp"),
                    Duration.ofSeconds(30),
                    "port");
            String published = printed.lines()
                    .map(String::strip)
                    .filter(line -> line.matches("[0-9.]+:\\d+"))
                    .reduce((first, last) -> last)
                    .orElseThrow(() -> new IllegalStateException(
                            service + " publishes no port for " + containerPort + ": " + printed.strip()));
            return "127.0.0.1:" + published.substring(published.lastIndexOf(':') + 1);
        });
    }

    ManagedChannel channel(String service, int containerPort) {
        String address = address(service, containerPort);
        int colon = address.lastIndexOf(':');
        return NettyChannelBuilder.forAddress(
                        address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))
                .usePlaintext()
                .build();
    }

    /** The Docker container of {@code service}. */
    synchronized String containerId(String service) {
        return containers.computeIfAbsent(
                service,
                key -> output(Duration.ofSeconds(30), "ps", "-q", service)
                        .lines()
                        .map(String::strip)
                        .filter(line -> line.matches("[0-9a-f]{12,}"))
                        .findFirst()
                        .orElseThrow(() -> new IllegalStateException("no container of " + service)));
    }

    /** What {@code command} printed inside {@code service}'s container. */
    String exec(String service, String... command) {
        List<String> docker = new ArrayList<>(List.of("docker", "exec", containerId(service)));
        docker.addAll(List.of(command));
        return run(docker, Duration.ofSeconds(30), "exec");
    }

    /** {@code docker compose run --rm client <args>}: the operator CLI's image, in the suite's network. */
    String runClient(String... args) {
        // Built first, so that run's own output holds no note that it built the image.
        output(Duration.ofMinutes(5), "--profile", "client", "build", "client");
        List<String> command = new ArrayList<>(List.of("--profile", "client", "run", "--rm", "-T", "client"));
        command.addAll(List.of(args));
        return output(Duration.ofMinutes(5), command.toArray(String[]::new));
    }

    /** What {@code service}'s container printed, standard output and error together. */
    String logs(String service) {
        return run(List.of("docker", "logs", containerId(service)), Duration.ofSeconds(30), "logs-" + service);
    }

    /** Docker's view of {@code service}'s health check: starting, healthy or unhealthy. */
    String dockerHealth(String service) {
        return run(
                        List.of("docker", "inspect", "--format", "{{.State.Health.Status}}", containerId(service)),
                        Duration.ofSeconds(30),
                        "inspect")
                .strip();
    }

    /**
     * Stops {@code services} side by side, each given the 30 s Compose gives it (each drains first).
     * Compose itself would stop a replica only after those that depend on it: stock-1 after stock-2 and
     * stock-3, two drains in a row.
     */
    void stop(String... services) {
        List<String> docker = new ArrayList<>(List.of("docker", "stop", "--time", "30"));
        for (String service : services) {
            docker.add(containerId(service));
        }
        run(docker, Duration.ofMinutes(2), "stop");
    }

    /**
     * Starts stopped {@code services} and returns once each answers SERVING on its gRPC port, so that a
     * later test finds it serving. A started container publishes its ports at new host ports, and
     * Docker's proxy accepts on them before the JVM listens: the addresses handed out before are
     * forgotten.
     */
    void start(String... services) {
        List<String> docker = new ArrayList<>(List.of("docker", "start"));
        synchronized (this) {
            for (String service : services) {
                ports.keySet().removeIf(key -> key.startsWith(service + ":"));
                docker.add(containerId(service));
            }
        }
        run(docker, Duration.ofMinutes(2), "start");
        awaitServing(services);
    }

    /** Waits until each of {@code services} (of {@link #GRPC_PORTS}) answers SERVING for its gRPC service. */
    private void awaitServing(String... services) {
        for (String service : services) {
            Map.Entry<Integer, String> grpc = Objects.requireNonNull(
                    GRPC_PORTS.get(service), () -> service + " publishes no gRPC port to wait on");
            String address = address(service, grpc.getKey());
            await(service + " SERVING")
                    .atMost(Duration.ofMinutes(4))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> HealthProbe.probe(address, grpc.getValue(), Duration.ofSeconds(2))
                            .serving());
        }
    }

    @Override
    public void close() throws Exception {
        try {
            // The tests are done: the services are killed at once instead of each waiting out its drain.
            compose(Duration.ofMinutes(3), "down", "--volumes", "--timeout", "0");
        } finally {
            traces.close();
        }
    }

    private void compose(Duration timeout, String... args) {
        output(timeout, args);
    }

    /** docker-compose (1.29) where installed, else the compose plugin; the suite's environment added. */
    private String output(Duration timeout, String... args) {
        List<String> command = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/docker-compose"))
                || Files.isExecutable(Path.of("/usr/local/bin/docker-compose"))) {
            command.add("docker-compose");
        } else {
            command.addAll(List.of("docker", "compose"));
        }
        command.addAll(List.of(
                "-p",
                PROJECT,
                "-f",
                Docker.ROOT.resolve("docker-compose.yml").toString(),
                "-f",
                Docker.ROOT.resolve("container-tests/compose-test.yml").toString()));
        command.addAll(List.of(args));
        return run(command, timeout, "compose-" + args[0]);
    }

    private String run(List<String> command, Duration timeout, String logName) {
        Path log = Path.of("target/" + logName + ".log");
        try {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(Docker.ROOT.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout
                        + ", see " + log.toAbsolutePath());
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output.strip());
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", command), e);
        }
    }
}
