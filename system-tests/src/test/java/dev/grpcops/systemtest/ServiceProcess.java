package dev.grpcops.systemtest;

import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One service as users run it: {@code java -jar}, from the jar {@code <module>/target/<module>.jar}
 * extracted as the images run it ({@link ClassDataArchive}), in its own process, on a loopback
 * address and free ports, its output in {@code target/process-logs/}.
 */
final class ServiceProcess implements AutoCloseable {

    private static final Path ROOT =
            Path.of(System.getProperty("grpcops.root", "..")).toAbsolutePath().normalize();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** deploy/Dockerfile's JAVA_OPTS and JAVA_GC (the image's AOT cache is its own: jvm-archive.options). */
    static final List<String> IMAGE_JVM_OPTIONS = imageJvmOptions();
    /**
     * The images' JVM, sized for the pods' memory limit (deploy/Dockerfile); C1 only, as tests start
     * processes all the time.
     */
    private static final List<String> JVM_OPTIONS = jvmOptions();

    /** {@link #freePort} hands out ports from here up to the kernel's ephemeral range, from a random start. */
    private static final int PORTS_FROM = 20_000;

    private static final int PORTS_BELOW_EPHEMERAL = ephemeralRangeStart() - PORTS_FROM;
    private static final AtomicInteger nextPort =
            new AtomicInteger(ThreadLocalRandom.current().nextInt(Math.max(1, PORTS_BELOW_EPHEMERAL)));

    final String name;
    final String host;
    final int grpcPort;
    final int managementPort;
    private final List<String> command;
    private final Map<String, String> env;
    private static final Set<Path> LOGS_IN_USE = ConcurrentHashMap.newKeySet();

    private final Path log;
    private Process process;
    /** Where this start's output begins in {@link #log}, which every start of {@link #name} appends to. */
    private long logStart;
    /** Where this object's first start's output begins: earlier runs' output is not this process's. */
    private long logBegin = -1;

    private static List<String> jvmOptions() {
        List<String> options = new ArrayList<>(IMAGE_JVM_OPTIONS);
        options.addAll(List.of("-XX:MaxRAM=512m", "-XX:TieredStopAtLevel=1"));
        return List.copyOf(options);
    }

    private static List<String> imageJvmOptions() {
        try {
            String dockerfile = Files.readString(ROOT.resolve("deploy/Dockerfile"));
            java.util.regex.Matcher opts =
                    java.util.regex.Pattern.compile("JAVA_OPTS=\"([^\"]+)\"").matcher(dockerfile);
            java.util.regex.Matcher gc =
                    java.util.regex.Pattern.compile("JAVA_GC=\"([^\"]+)\"").matcher(dockerfile);
            if (!opts.find() || !gc.find()) {
                throw new IllegalStateException("deploy/Dockerfile sets no JAVA_OPTS or JAVA_GC");
            }
            return List.of((opts.group(1) + " " + gc.group(1)).trim().split("\\s+"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ServiceProcess(
            String module, String name, String host, int grpcPort, Map<String, String> env, List<String> args) {
        this(List.of(), module, name, host, grpcPort, freePort(host), env, args);
    }

    /** {@code prefix} runs the JVM (e.g. {@code ip netns exec NAME}: it execs the JVM, whose PID is then the process's). */
    private ServiceProcess(
            List<String> prefix,
            String module,
            String name,
            String host,
            int grpcPort,
            int managementPort,
            Map<String, String> env,
            List<String> args) {
        this.name = name;
        this.host = host;
        this.grpcPort = grpcPort;
        this.managementPort = managementPort;
        this.env = env;
        this.log = claimLog(name);
        // A module under a folder (examples/pricing-boot4) names its jar after its last part.
        Path jar = ROOT.resolve(module + "/target/" + Path.of(module).getFileName() + ".jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(
                    jar + " is missing: build it first (mvn verify builds every jar before these tests)");
        }
        this.command = new ArrayList<>(prefix);
        this.command.add(ProcessHandle.current().info().command().orElse("java"));
        this.command.addAll(JVM_OPTIONS);
        this.command.addAll(
                ClassDataArchive.launch(module, ROOT, JVM_OPTIONS, ROOT.resolve("system-tests/target/class-data")));
        this.command.addAll(List.of(
                "--grpc.server.address=" + host,
                "--grpc.server.port=" + grpcPort,
                "--spring.grpc.server.port=" + grpcPort, // a Spring gRPC service's (examples/pricing-boot4)
                "--management.server.address=" + host,
                "--management.server.port=" + managementPort));
        this.command.addAll(args);
        if (args.stream().noneMatch(arg -> arg.startsWith("--grpcops.shutdown.drain-delay="))) {
            // Tests stop processes all the time; the drain itself is tested with its own delay.
            this.command.add("--grpcops.shutdown.drain-delay=100ms");
        }
        if (args.stream().noneMatch(arg -> arg.startsWith("--grpcops.warmup.enabled="))) {
            // Tests count the calls each replica served, and start processes all the time: no warm-up
            // calls unless a test asks for them (its own tests are the starter's).
            this.command.add("--grpcops.warmup.enabled=false");
        }
    }

    /** Starts {@code module}'s jar as {@code name} on {@code host}, with extra environment and arguments. */
    static ServiceProcess start(String module, String name, String host, Map<String, String> env, String... args) {
        return startAt(module, name, host, freePort(host), env, args);
    }

    /** Starts on a given gRPC port: replicas on 127.0.0.2, .3, .4 share one port, as pods do. */
    static ServiceProcess startAt(
            String module, String name, String host, int grpcPort, Map<String, String> env, String... args) {
        ServiceProcess service = new ServiceProcess(module, name, host, grpcPort, env, List.of(args));
        service.start();
        return service;
    }

    /**
     * Starts {@code module}'s jar inside {@code namespace}, on its address: a node of its own, whose
     * network a test can cut. The namespace has every port to itself: the management port is the
     * gRPC port + 1.
     */
    static ServiceProcess startIn(
            NetworkNamespace namespace,
            String module,
            String name,
            int grpcPort,
            Map<String, String> env,
            String... args) {
        ServiceProcess service = new ServiceProcess(
                namespace.exec(), module, name, namespace.address, grpcPort, grpcPort + 1, env, List.of(args));
        service.start();
        return service;
    }

    static ServiceProcess start(String module, String... args) {
        return start(module, module, "127.0.0.1", Map.of(), args);
    }

    /** Starts the same service again (same ports), after it stopped. */
    void start() {
        try {
            Files.createDirectories(log.getParent());
            logStart = Files.exists(log) ? Files.size(log) : 0;
            if (logBegin < 0) {
                logBegin = logStart;
            }
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(env);
            process = ChildProcesses.track(builder.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String target() {
        return host + ":" + grpcPort;
    }

    ManagedChannel channel() {
        return NettyChannelBuilder.forAddress(host, grpcPort).usePlaintext().build();
    }

    /**
     * Waits until the process answers the standard health check of {@code ""} with SERVING; fails
     * at once if the process exits meanwhile.
     */
    ServiceProcess awaitServing(Duration timeout) {
        ManagedChannel channel = channel();
        try {
            await(name + " SERVING")
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(200))
                    .failFast(() -> {
                        if (!process.isAlive()) {
                            throw new IllegalStateException(name + " exited with " + process.exitValue()
                                    + " while starting: " + whyItFailed() + "\n(whole log: " + log + ")");
                        }
                    })
                    .until(() -> {
                        try {
                            return HealthGrpc.newBlockingStub(channel)
                                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                                            .check(HealthCheckRequest.getDefaultInstance())
                                            .getStatus()
                                    == ServingStatus.SERVING;
                        } catch (StatusRuntimeException notYet) {
                            return false; // still starting
                        }
                    });
            return this;
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException(
                    name + " not SERVING after " + timeout + ": " + whyItFailed() + "\n(whole log: " + log + ")", e);
        } finally {
            channel.shutdownNow();
        }
    }

    /** The Prometheus text of {@code /actuator/prometheus}. */
    String metrics() {
        try {
            HttpRequest request = HttpRequest.newBuilder(
                            URI.create("http://" + host + ":" + managementPort + "/actuator/prometheus"))
                    .timeout(Duration.ofSeconds(10))
                    .build();
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException(name + " metrics answered " + response.statusCode());
            }
            return response.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGTERM, and wait for the process to exit. */
    int terminate(Duration timeout) {
        return stop(false, timeout);
    }

    /** SIGKILL: no chance to drain. */
    void kill() {
        stop(true, Duration.ofSeconds(10));
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    @Override
    public void close() {
        try {
            if (isAlive()) {
                stop(false, Duration.ofSeconds(15));
            }
        } finally {
            LOGS_IN_USE.remove(log);
        }
    }

    /**
     * {@code name}.log, or {@code name-2}.log … while another test's process of the same name still
     * writes to it: two processes appending to one file would each read the other's lines as theirs.
     */
    private static Path claimLog(String name) {
        Path dir = ROOT.resolve("system-tests/target/process-logs");
        for (int i = 1; ; i++) {
            Path candidate = dir.resolve(i == 1 ? name + ".log" : name + "-" + i + ".log");
            if (LOGS_IN_USE.add(candidate)) {
                return candidate;
            }
        }
    }

    private int stop(boolean force, Duration timeout) {
        if (!process.isAlive()) {
            return process.exitValue();
        }
        if (force) {
            process.destroyForcibly();
        } else {
            process.destroy();
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                // SIGKILL cannot be refused; the bound only keeps a wedged kernel from hanging the suite.
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(name + " did not exit within " + timeout + " of "
                        + (force ? "SIGKILL" : "SIGTERM") + ", see " + log);
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * {@link #stopAll(List)} of those of {@code services} that were started: a class's static
     * processes, some still null when its start failed.
     */
    static void stopAll(ServiceProcess... services) {
        stopAll(java.util.Arrays.stream(services)
                .filter(java.util.Objects::nonNull)
                .toList());
    }

    /** SIGTERM to all at once, then wait for each: stopping several processes costs one drain. */
    static void stopAll(List<ServiceProcess> services) {
        services.stream().filter(ServiceProcess::isAlive).forEach(service -> service.process.destroy());
        services.forEach(ServiceProcess::close);
    }

    /**
     * What the process has printed so far, over all its starts: not what earlier runs of the tests
     * appended to the same file (a test counting log lines would count theirs too).
     */
    String log() {
        return logFrom(logBegin);
    }

    private String logFrom(long offset) {
        try (var in = Files.newInputStream(log)) {
            in.skipNBytes(Math.min(Math.max(0, offset), Files.size(log))); // a log recreated meanwhile is read whole
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Why this start failed, as the process printed it, its first line the gist (CI reports often show
     * only a message's first line): Spring Boot's failure report if there is one (the gist its
     * description), else the last 20 lines (the gist the root cause of the last stack trace).
     */
    private String whyItFailed() {
        String output;
        try {
            output = logFrom(logStart);
        } catch (UncheckedIOException e) {
            return "its log could not be read: " + e.getCause();
        }
        List<String> lines = output.lines().toList();
        int report = lines.indexOf("APPLICATION FAILED TO START");
        if (report >= 0) {
            List<String> excerpt = lines.subList(report, Math.min(lines.size(), report + 20));
            int description = excerpt.indexOf("Description:");
            String gist = excerpt.stream()
                    .skip(description + 1)
                    .filter(line -> !line.isBlank())
                    .findFirst()
                    .orElse("APPLICATION FAILED TO START");
            return gist.strip() + "\n" + String.join("\n", excerpt);
        }
        String gist = lines.stream()
                .filter(line -> line.startsWith("Caused by: "))
                .reduce((first, last) -> last)
                .orElse(lines.isEmpty() ? "(it printed nothing)" : lines.get(lines.size() - 1));
        return gist.strip() + "\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }

    /**
     * A port free on {@code host} and every one of {@code more}, below the kernel's ephemeral range
     * and handed out by this JVM once per pass over that range: the process binds it seconds later,
     * and a port from the ephemeral range may meanwhile become some connection's local port.
     */
    static int freePort(String host, String... more) {
        List<String> hosts = new ArrayList<>(List.of(host));
        hosts.addAll(List.of(more));
        if (PORTS_BELOW_EPHEMERAL < 1000) {
            return ephemeralPort(hosts); // the kernel's range starts too low to leave room below it
        }
        for (int tries = 0; tries < PORTS_BELOW_EPHEMERAL; tries++) {
            int port = PORTS_FROM + Math.floorMod(nextPort.getAndIncrement(), PORTS_BELOW_EPHEMERAL);
            if (bindable(port, hosts)) {
                return port;
            }
        }
        throw new IllegalStateException("no port free on all of " + hosts);
    }

    /** Whether {@code port} is free on every host; any failure but "in use" (a missing address) is thrown. */
    private static boolean bindable(int port, List<String> hosts) {
        for (String host : hosts) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getByName(host), port));
            } catch (IOException e) {
                if (e instanceof BindException
                        && e.getMessage() != null
                        && e.getMessage().contains("in use")) {
                    return false;
                }
                throw new UncheckedIOException(host + ":" + port + " cannot be bound", e);
            }
        }
        return true;
    }

    /** Where the kernel's own choice is all there is: a port it hands out, free on every host. */
    private static int ephemeralPort(List<String> hosts) {
        for (int tries = 0; tries < 100; tries++) {
            int port;
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getByName(hosts.get(0)), 0));
                port = socket.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (bindable(port, hosts)) {
                return port;
            }
        }
        throw new IllegalStateException("no port free on all of " + hosts);
    }

    /** The first port of /proc/sys/net/ipv4/ip_local_port_range; Linux's default where it cannot be read. */
    private static int ephemeralRangeStart() {
        try {
            // Not Files.readString: it trusts the size procfs reports and reads one byte.
            return Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .get(0)
                    .trim()
                    .split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
