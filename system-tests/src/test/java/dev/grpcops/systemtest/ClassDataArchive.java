package dev.grpcops.systemtest;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * How the system tests start a service: as the images do (deploy/Dockerfile), from Spring Boot's
 * extracted layout of the jar with a class-data-sharing archive that one training run made, so that
 * none of a run's fifty-odd starts finds, reads and verifies its classes one by one (measured on
 * Stock, 2 CPUs: 5.5 s to started from the jar, 2.6 s so). The archive is made the first time a jar
 * is started in a test run, or after the jar changed; when that fails, the service starts from the
 * jar as it is, and the run only takes longer. The first start of a run has the archives of all four
 * services made, two at a time, while it waits for its own: one training run leaves a core idle, and
 * the test classes of both lanes start by waiting for one.
 */
final class ClassDataArchive {

    /** The services the system tests start, in the order the test classes first need them. */
    static final List<String> SERVICES = List.of("stock-service", "pricing-service", "edge-service", "whoami-service");

    private static final Map<String, CompletableFuture<List<String>>> LAUNCHES = new ConcurrentHashMap<>();
    private static final ExecutorService TRAINING = Executors.newFixedThreadPool(2, runnable -> {
        Thread thread = new Thread(runnable, "class-data-archive");
        thread.setDaemon(true);
        return thread;
    });

    private ClassDataArchive() {}

    /**
     * The JVM options and {@code -jar} arguments that start {@code module} (its jar at
     * {@code <root>/<module>/target/<name>.jar}, the name the module's last folder) with its archive, made now if there is none for this
     * jar; {@code jvmOptions} must be those of every start.
     */
    static List<String> launch(String module, Path root, List<String> jvmOptions, Path workDir) {
        for (String service : SERVICES) {
            prepare(service, root, jvmOptions, workDir);
        }
        return prepare(module, root, jvmOptions, workDir).join();
    }

    private static CompletableFuture<List<String>> prepare(
            String module, Path root, List<String> jvmOptions, Path workDir) {
        Path jar = root.resolve(module + "/target/" + Path.of(module).getFileName() + ".jar");
        return LAUNCHES.computeIfAbsent(
                module,
                m -> CompletableFuture.supplyAsync(() -> make(m, jar, jvmOptions, workDir.resolve(m)), TRAINING));
    }

    private static List<String> make(String module, Path jar, List<String> jvmOptions, Path dir) {
        Path archive = dir.resolve("app.jsa");
        Path extracted = dir.resolve("extracted/" + jar.getFileName());
        Path stamp = dir.resolve("made-from");
        try {
            String source = jar + " " + Files.size(jar) + " " + Files.getLastModifiedTime(jar);
            if (Files.isRegularFile(archive)
                    && Files.isRegularFile(extracted)
                    && Files.exists(stamp)
                    && Files.readString(stamp).equals(source)) {
                return withArchive(archive, extracted);
            }
            deleteRecursively(dir);
            Files.createDirectories(dir);
            run(
                    dir.resolve("extract.log"),
                    List.of(
                            java(),
                            "-Djarmode=tools",
                            "-jar",
                            jar.toString(),
                            "extract",
                            "--destination",
                            dir.resolve("extracted").toString()));
            train(dir, jvmOptions, archive, extracted);
            if (!Files.isRegularFile(archive)) {
                System.err.println(module + ": no class-data archive made (see " + dir.resolve("training.log")
                        + "); starting from the jar without one");
                return List.of("-jar", jar.toString());
            }
            Files.writeString(stamp, source);
            return withArchive(archive, extracted);
        } catch (IOException | RuntimeException e) {
            System.err.println(module + ": no class-data archive made (" + e + "); starting from the jar without one");
            return List.of("-jar", jar.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of("-jar", jar.toString());
        }
    }

    private static List<String> withArchive(Path archive, Path extracted) {
        // -Xshare:auto: an archive that does not fit (another JVM) is ignored, not an error.
        return List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto", "-jar", extracted.toString());
    }

    /** Starts the service once, waits until it is SERVING, stops it: the JVM writes the archive as it exits. */
    private static void train(Path dir, List<String> jvmOptions, Path archive, Path extracted)
            throws IOException, InterruptedException {
        int port = ServiceProcess.freePort("127.0.0.1");
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(jvmOptions);
        command.addAll(List.of(
                "-XX:ArchiveClassesAtExit=" + archive,
                "-jar",
                extracted.toString(),
                "--grpc.server.address=127.0.0.1",
                "--grpc.server.port=" + port,
                "--spring.grpc.server.port=" + port, // a Spring gRPC service's (examples/pricing-boot4)
                "--management.server.address=127.0.0.1",
                "--management.server.port=0",
                "--grpcops.shutdown.drain-delay=0s",
                "--grpcops.warmup.enabled=false"));
        Process training = ChildProcesses.track(new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("training.log").toFile())
                .start());
        ManagedChannel channel =
                NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (training.isAlive() && !serving(channel) && System.nanoTime() < giveUp) {
                Thread.sleep(100); // polling the health service, not a synchronisation
            }
        } finally {
            channel.shutdownNow();
            training.destroy(); // SIGTERM: the service drains and exits, the JVM dumps the archive
            if (!training.waitFor(2, TimeUnit.MINUTES)) {
                training.destroyForcibly();
            }
        }
    }

    private static boolean serving(ManagedChannel channel) {
        try {
            return HealthGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.getDefaultInstance())
                            .getStatus()
                    == ServingStatus.SERVING;
        } catch (StatusRuntimeException notYet) {
            return false;
        }
    }

    private static void run(Path log, List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IllegalStateException(command + " failed, see " + log);
        }
    }

    private static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
