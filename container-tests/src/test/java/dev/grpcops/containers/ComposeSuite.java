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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * docker-compose.yml as users bring it up, once for every container test of a run: the images built
 * from deploy/Dockerfile, three Stock and two Pricing replicas, Edge, three WhoAmI replicas and
 * Prometheus. container-tests/compose-test.yml adds only what a test needs to look from outside:
 * ports published on loopback for the replicas and management ports Compose keeps internal, health
 * checks every 2 s instead of 10 s (so that a test waits seconds, not tens, for Docker's view),
 * warm-ups cut to 2 s, and the traces sent to a receiver in this JVM. Brought down when the run's last test has finished.
 */
final class ComposeSuite implements ExtensionContext.Store.CloseableResource {

    /** The admin token every service of the suite gets. */
    static final String ADMIN_TOKEN = "container-test-admin-token";

    private static final String PROJECT = "grpcops-it";
    private static ComposeSuite running;

    final OtlpReceiver traces;
    private final Map<String, String> environment;
    private final Map<String, String> ports = new HashMap<>();

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
            // The four images side by side (each build runs its service once, to make its AOT cache), then the suite.
            suite.compose(Duration.ofMinutes(10), "build", "--parallel");
            suite.compose(Duration.ofMinutes(10), "up", "-d");
            for (String[] service : new String[][] {
                {"stock-1", "50061", "chain.v1.Stock"},
                {"stock-2", "50061", "chain.v1.Stock"},
                {"stock-3", "50061", "chain.v1.Stock"},
                {"pricing-1", "50062", "chain.v1.Pricing"},
                {"edge", "50063", "chain.v1.Edge"},
                {"whoami-1", "50051", "grpcops.v1.WhoAmI"},
                {"whoami-2", "50051", "grpcops.v1.WhoAmI"},
                {"whoami-3", "50051", "grpcops.v1.WhoAmI"}
            }) {
                String address = suite.address(service[0], Integer.parseInt(service[1]));
                await(service[0] + " SERVING")
                        .atMost(Duration.ofMinutes(4))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> HealthProbe.probe(address, service[2], Duration.ofSeconds(2))
                                .serving());
            }
            return suite;
        } catch (Exception | Error e) {
            suite.close();
            throw e;
        }
    }

    /** Where this machine reaches {@code service}'s {@code containerPort}: {@code 127.0.0.1:<published>}. */
    synchronized String address(String service, int containerPort) {
        return ports.computeIfAbsent(service + ":" + containerPort, key -> {
            String printed = output(Duration.ofSeconds(30), "port", service, Integer.toString(containerPort));
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
    String containerId(String service) {
        return output(Duration.ofSeconds(30), "ps", "-q", service)
                .lines()
                .map(String::strip)
                .filter(line -> line.matches("[0-9a-f]{12,}"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no container of " + service));
    }

    /** What {@code command} printed inside {@code service}'s container. */
    String exec(String service, String... command) {
        List<String> docker = new ArrayList<>(List.of("docker", "exec", containerId(service)));
        docker.addAll(List.of(command));
        return run(docker, Duration.ofSeconds(30), "exec");
    }

    /** Docker's view of {@code service}'s health check: starting, healthy or unhealthy. */
    String dockerHealth(String service) {
        return run(
                        List.of("docker", "inspect", "--format", "{{.State.Health.Status}}", containerId(service)),
                        Duration.ofSeconds(30),
                        "inspect")
                .strip();
    }

    void stop(String... services) {
        List<String> args = new ArrayList<>(List.of("stop", "--timeout", "30"));
        args.addAll(List.of(services));
        compose(Duration.ofMinutes(2), args.toArray(String[]::new));
    }

    /**
     * Starts stopped {@code services} and returns once Docker sees each healthy (its readiness
     * answered 200), so that a later test finds it serving. A started container publishes its ports
     * at new host ports, and Docker's proxy accepts on them before the JVM listens: the addresses
     * handed out before are forgotten.
     */
    void start(String... services) {
        List<String> args = new ArrayList<>(List.of("start"));
        args.addAll(List.of(services));
        synchronized (this) {
            for (String service : services) {
                ports.keySet().removeIf(key -> key.startsWith(service + ":"));
            }
        }
        compose(Duration.ofMinutes(2), args.toArray(String[]::new));
        for (String service : services) {
            await(service + " healthy again")
                    .atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .until(() -> dockerHealth(service).equals("healthy"));
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
