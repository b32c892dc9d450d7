package dev.grpcops.containers;

import dev.grpcops.lifecycle.HealthProbe;
import java.time.Duration;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;

/**
 * Ready when the container answers a standard health Check of {@code service} with SERVING, asked
 * from the test over the mapped port: kubelet's grpc probe, without a JVM per probe inside a busy
 * container.
 */
final class GrpcHealthWait extends AbstractWaitStrategy {

    private final int grpcPort;
    private final String service;

    GrpcHealthWait(int grpcPort, String service) {
        this.grpcPort = grpcPort;
        this.service = service;
        withStartupTimeout(Duration.ofMinutes(4));
    }

    @Override
    protected void waitUntilReady() {
        String target = waitStrategyTarget.getHost() + ":" + waitStrategyTarget.getMappedPort(grpcPort);
        long giveUp = System.nanoTime() + startupTimeout.toNanos();
        HealthProbe.Result last = null;
        while (System.nanoTime() < giveUp) {
            if (!waitStrategyTarget.isRunning()) {
                throw new ContainerLaunchException("container exited: " + waitStrategyTarget.getLogs());
            }
            last = HealthProbe.probe(target, service, Duration.ofSeconds(2));
            if (last.serving()) {
                return;
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ContainerLaunchException("interrupted", e);
            }
        }
        throw new ContainerLaunchException(service + " at " + target + " not SERVING after " + startupTimeout
                + " (last: " + last + ")");
    }
}
