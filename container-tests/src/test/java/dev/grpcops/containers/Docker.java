package dev.grpcops.containers;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.testcontainers.DockerClientFactory;

/** The Docker engine the container tests need, and where the project is. */
final class Docker {

    static final Path ROOT =
            Path.of(System.getProperty("grpcops.root", "..")).toAbsolutePath().normalize();

    private Docker() {}

    /** Without an engine: skipped with a message on a laptop, a failure in CI (CI=true). */
    static void requireEngine() {
        boolean available = DockerClientFactory.instance().isDockerAvailable();
        if (!available && Ci.isCi()) {
            throw new IllegalStateException("no Docker engine, and CI=true: the container tests must run in CI"
                    + " (scripts/install-deps.sh and scripts/local-images.sh provide one)");
        }
        assumeTrue(available, "no Docker engine: container tests skipped (they run in CI)");
    }

    /** The JRE base image the Dockerfiles build on: BASE_IMAGE, or the public default. */
    static String baseImage() {
        String base = System.getenv("BASE_IMAGE");
        return base == null || base.isBlank() ? "eclipse-temurin:25-jre" : base;
    }
}
