package dev.grpcops.containers;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.images.builder.ImageFromDockerfile;

/** Containers of the services, from images built with the project's own Dockerfile (deploy/Dockerfile). */
final class ServiceContainers {

    /** The admin token every service container gets. */
    static final String ADMIN_TOKEN = "container-test-token";

    private static final Map<String, ImageFromDockerfile> IMAGES = new ConcurrentHashMap<>();

    /** Every service's memory limit in bytes, from docker-compose.yml (held equal to the pods' by ManifestTests). */
    static final long MEMORY_LIMIT = composeLimit("mem_limit: (\\d+)m") * 1024 * 1024;

    /** Every service's CPU limit in CPUs, from docker-compose.yml. */
    static final double CPU_LIMIT = composeCpus();

    private ServiceContainers() {}

    /** The gRPC and management ports each service's image is built with, as docker-compose.yml builds it. */
    private static final Map<String, List<String>> BUILT_WITH = Map.of(
            "stock-service", List.of("50061", "9061"),
            "pricing-service", List.of("50062", "9062"),
            "edge-service", List.of("50063", "9063"),
            "whoami-service", List.of("50051", "9051"));

    /** The image of {@code module}, built once per test run from deploy/Dockerfile. */
    static ImageFromDockerfile image(String module) {
        return IMAGES.computeIfAbsent(module, m -> {
            Path jar = Docker.ROOT.resolve(m + "/target/" + m + ".jar");
            Path cli = Docker.ROOT.resolve("cli/target/grpcops-cli.jar");
            for (Path needed : List.of(jar, cli)) {
                if (!needed.toFile().isFile()) {
                    throw new IllegalStateException(needed + " is missing: mvn verify builds it before these tests");
                }
            }
            // Kept after the run (same tag each time), so Docker's layer cache makes the next build quick.
            return new ImageFromDockerfile("grpcops/" + m + ":it", false)
                    .withFileFromPath("deploy/Dockerfile", Docker.ROOT.resolve("deploy/Dockerfile"))
                    .withDockerfilePath("deploy/Dockerfile")
                    .withFileFromPath(m + "/target/" + m + ".jar", jar)
                    .withFileFromPath("cli/target/grpcops-cli.jar", cli)
                    .withBuildArg("BASE_IMAGE", Docker.baseImage())
                    .withBuildArg("SERVICE", m)
                    .withBuildArg("PORT", BUILT_WITH.get(m).get(0))
                    .withBuildArg("MANAGEMENT_PORT", BUILT_WITH.get(m).get(1));
        });
    }

    /**
     * A container of {@code module} on {@code network}, ready once a gRPC health Check of
     * {@code healthName} from the test says SERVING; limited as in Compose, and the image's HEALTHCHECK
     * runs as there.
     */
    static GenericContainer<?> service(String module, Network network, String alias, int grpcPort, String healthName) {
        return new GenericContainer<>(image(module))
                .withCreateContainerCmdModifier(create -> create.getHostConfig()
                        .withMemory(MEMORY_LIMIT)
                        .withMemorySwap(MEMORY_LIMIT)
                        .withNanoCPUs((long) (CPU_LIMIT * 1e9)))
                .withNetwork(network)
                .withNetworkAliases(alias)
                .withExposedPorts(grpcPort)
                .withEnv("GRPCOPS_ADMIN_TOKEN", ADMIN_TOKEN)
                .waitingFor(new GrpcHealthWait(grpcPort, healthName));
    }

    private static String composeService() {
        try {
            String compose = Files.readString(Docker.ROOT.resolve("docker-compose.yml"));
            return compose.substring(compose.indexOf("x-service:"), compose.indexOf("x-build:"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long composeLimit(String pattern) {
        Matcher matcher = Pattern.compile(pattern).matcher(composeService());
        if (!matcher.find()) {
            throw new IllegalStateException("docker-compose.yml's x-service has no " + pattern);
        }
        return Long.parseLong(matcher.group(1));
    }

    private static double composeCpus() {
        Matcher matcher = Pattern.compile("cpus: ([0-9.]+)").matcher(composeService());
        if (!matcher.find()) {
            throw new IllegalStateException("docker-compose.yml's x-service has no cpus");
        }
        return Double.parseDouble(matcher.group(1));
    }

    static ManagedChannel channel(GenericContainer<?> container, int grpcPort) {
        return NettyChannelBuilder.forAddress(container.getHost(), container.getMappedPort(grpcPort))
                .usePlaintext()
                .build();
    }

    /** Stops every container, also when one of them fails to stop; then the network. */
    static void removeAll(Network network, GenericContainer<?>... containers) {
        for (GenericContainer<?> container : containers) {
            try {
                if (container != null) {
                    container.stop();
                }
            } catch (RuntimeException e) {
                System.err.println("could not remove " + container + ": " + e);
            }
        }
        if (network != null) {
            network.close();
        }
    }
}
