package dev.grpcops.kubernetes;

import static dev.grpcops.kubernetes.Slices.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.client.ServiceConfigs;
import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a new pod is found, side by side on loopback: one channel calling without pause over two pods
 * when a third becomes ready. Headless DNS (the servers' maximum connection age set to 2 s, as a lab
 * would) finds it only once a connection reaches its age and the channel resolves again;
 * {@code kubernetes:///} finds it from the EndpointSlice watch, with every connection still the first.
 * Asserted: whose connections to the old pods had closed or been made again by the new pod's first
 * call. How long each took is printed, not held to (a benchmark's figure).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ScaleUpComparisonTests {

    private static final Duration CONNECTION_AGE = Duration.ofSeconds(2);
    private static final String A = Backends.IPS.get(0);
    private static final String B = Backends.IPS.get(1);
    private static final String C = Backends.IPS.get(2);

    /**
     * What the channel had done when the new pod answered its first call. An aged-out connection shows
     * as one closed before it shows as one made again: the channel resolves again as the old one goes,
     * and the new pod's first call can be answered before the old pod accepts the new connection.
     */
    private record ScaleUp(long firstCallMs, int connectionsToOldPods, int closedToOldPods) {

        /** Connections to the old pods made or closed since the channel's first two. */
        int changes() {
            return connectionsToOldPods - 2 + closedToOldPods;
        }
    }

    @Test
    void kubernetesResolverSeesNewPodsOnTheSameConnectionsDnsAtTheNextReconnect() throws Exception {
        ScaleUp dns = dnsTrial();
        ScaleUp kubernetes = kubernetesTrial();
        System.out.printf(
                "new pod's first call after scale-up: dns:/// + %d ms max connection age: %d ms (%s);"
                        + " kubernetes:///: %d ms (%s)%n",
                CONNECTION_AGE.toMillis(), dns.firstCallMs(), dns, kubernetes.firstCallMs(), kubernetes);
        assertThat(kubernetes)
                .as("kubernetes:///: the old pods' first connections still in use")
                .extracting(ScaleUp::connectionsToOldPods, ScaleUp::closedToOldPods)
                .containsExactly(2, 0);
        assertThat(dns.changes())
                .as("dns:///: the new pod found only after a connection aged out (%s)", dns)
                .isPositive();
    }

    private ScaleUp dnsTrial() throws Exception {
        try (Backends backends = new Backends(CONNECTION_AGE)) {
            HeadlessDnsStandIn dns = new HeadlessDnsStandIn(List.of(A, B), backends.port);
            return measure(backends, dns, "headless:///who", () -> dns.answer(List.of(A, B, C)));
        }
    }

    private ScaleUp kubernetesTrial() throws Exception {
        try (MockApi api = MockApi.crud();
                Backends backends = new Backends(null)) {
            Slices.put(api.admin(), "who", backends.port, ready(A), ready(B));
            KubernetesNameResolverProvider provider =
                    new KubernetesNameResolverProvider(api::config, ResolverListener.NONE, 4);
            return measure(
                    backends,
                    provider,
                    "kubernetes:///who.grpcops:grpc",
                    () -> Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), ready(C)));
        }
    }

    /** From {@code scaleUp} to the first call answered by the new pod: how long, and the old pods' connections then. */
    @SuppressWarnings("deprecation") // nameResolverFactory: this channel alone gets the provider under test
    private static ScaleUp measure(Backends backends, NameResolver.Factory resolver, String target, Runnable scaleUp)
            throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forTarget(target)
                .nameResolverFactory(resolver)
                .usePlaintext()
                .defaultServiceConfig(ServiceConfigs.roundRobin())
                .build();
        try (SteadyCaller caller = new SteadyCaller(channel)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> backends.calls(A) > 0 && backends.calls(B) > 0);
            long start = System.nanoTime();
            scaleUp.run();
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(2))
                    .until(() -> caller.firstAnswerNanos.containsKey(C));
            int connections = backends.connections(A) + backends.connections(B);
            int closed = backends.closedConnections(A) + backends.closedConnections(B);
            assertThat(caller.failed).hasValue(0);
            return new ScaleUp((caller.firstAnswerNanos.get(C) - start) / 1_000_000, connections, closed);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
