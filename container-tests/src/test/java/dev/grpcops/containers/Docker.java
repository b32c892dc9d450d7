package dev.grpcops.containers;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
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

    /**
     * The host's address on Docker's default bridge: what {@code host.docker.internal} (host-gateway)
     * names inside the suite's containers.
     */
    static String bridgeGateway() {
        try {
            NetworkInterface docker0 = NetworkInterface.getByName("docker0");
            if (docker0 != null) {
                for (InetAddress address : java.util.Collections.list(docker0.getInetAddresses())) {
                    if (address instanceof Inet4Address) {
                        return address.getHostAddress();
                    }
                }
            }
        } catch (SocketException e) {
            // asked of Docker below
        }
        var config = DockerClientFactory.instance()
                .client()
                .inspectNetworkCmd()
                .withNetworkId("bridge")
                .exec()
                .getIpam()
                .getConfig()
                .get(0);
        if (config.getGateway() != null) {
            return config.getGateway();
        }
        // No gateway named: Docker takes the subnet's first address.
        String subnet = config.getSubnet();
        String network = subnet.substring(0, subnet.indexOf('/'));
        return network.substring(0, network.lastIndexOf('.')) + ".1";
    }
}
