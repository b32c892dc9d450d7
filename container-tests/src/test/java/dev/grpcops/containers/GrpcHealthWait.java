package dev.grpcops.containers;

import static org.awaitility.Awaitility.await;

import dev.grpcops.cli.HealthProbe;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;
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
        AtomicReference<HealthProbe.Result> last = new AtomicReference<>();
        try {
            await(service + " at " + target + " SERVING")
                    .atMost(startupTimeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(500))
                    .failFast("container exited", () -> !waitStrategyTarget.isRunning())
                    .until(() -> {
                        last.set(HealthProbe.probe(target, service, Duration.ofSeconds(2)));
                        return last.get().serving();
                    });
        } catch (TerminalFailureException exited) {
            throw new ContainerLaunchException("container exited: " + waitStrategyTarget.getLogs(), exited);
        } catch (ConditionTimeoutException e) {
            throw new ContainerLaunchException(
                    service + " at " + target + " not SERVING after " + startupTimeout + " (last: " + last.get() + ")",
                    e);
        }
    }
}
