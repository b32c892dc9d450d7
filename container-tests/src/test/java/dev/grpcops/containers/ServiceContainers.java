package dev.grpcops.containers;

import com.github.dockerjava.api.model.HealthCheck;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.images.builder.ImageFromDockerfile;

/** Containers of the services, from images built with the project's own Dockerfiles. */
final class ServiceContainers {

    /** The admin token every service container gets. */
    static final String ADMIN_TOKEN = "container-test-token";

    private static final Map<String, ImageFromDockerfile> IMAGES = new ConcurrentHashMap<>();

    private ServiceContainers() {
    }

    /** The image of {@code module}, built once per test run from {@code <module>/Dockerfile}. */
    static ImageFromDockerfile image(String module) {
        return IMAGES.computeIfAbsent(module, m -> {
            Path dir = Docker.ROOT.resolve(m);
            Path jar = dir.resolve("target/" + m + ".jar");
            if (!jar.toFile().isFile()) {
                throw new IllegalStateException(jar + " is missing: mvn verify builds it before these tests");
            }
            // Kept after the run (same tag each time), so Docker's layer cache makes the next build quick.
            return new ImageFromDockerfile("grpcops/" + m + ":it", false)
                    .withFileFromPath("Dockerfile", dir.resolve("Dockerfile"))
                    .withFileFromPath("target/" + m + ".jar", jar)
                    .withBuildArg("BASE_IMAGE", Docker.baseImage());
        });
    }

    /**
     * A container of {@code module} on {@code network}, ready once a gRPC health Check of
     * {@code healthName} from the test says SERVING. The image's HEALTHCHECK (a JVM per probe) is
     * switched off here, where several containers start at once on a small machine; ComposeIT runs it.
     */
    static GenericContainer<?> service(String module, Network network, String alias, int grpcPort, String healthName) {
        return new GenericContainer<>(image(module))
                .withNetwork(network)
                .withNetworkAliases(alias)
                .withExposedPorts(grpcPort)
                .withEnv("GRPCOPS_ADMIN_TOKEN", ADMIN_TOKEN)
                .withCreateContainerCmdModifier(cmd -> cmd.withHealthcheck(new HealthCheck().withTest(List.of("NONE"))))
                .waitingFor(new GrpcHealthWait(grpcPort, healthName));
    }

    static ManagedChannel channel(GenericContainer<?> container, int grpcPort) {
        return NettyChannelBuilder.forAddress(container.getHost(), container.getMappedPort(grpcPort)).usePlaintext().build();
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
