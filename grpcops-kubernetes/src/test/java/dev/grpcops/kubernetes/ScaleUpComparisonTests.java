package dev.grpcops.kubernetes;

import static dev.grpcops.kubernetes.Slices.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.client.ServiceConfigs;
import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * "How long until a new pod gets calls?" measured on loopback, one channel calling without pause
 * over two pods when a third becomes ready: headless DNS with the servers' maximum connection age
 * (here 2 s, as a lab would set it; production's 5 min scales it) against {@code kubernetes:///}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ScaleUpComparisonTests {

    private static final int TRIALS = 5;
    private static final Duration CONNECTION_AGE = Duration.ofSeconds(2);
    private static final String A = Backends.IPS.get(0);
    private static final String B = Backends.IPS.get(1);
    private static final String C = Backends.IPS.get(2);

    @Test
    void kubernetesResolverSeesNewPodsAtOnceDnsAtTheNextReconnect() throws Exception {
        List<Long> dns = new ArrayList<>();
        List<Long> kubernetes = new ArrayList<>();
        for (int trial = 0; trial < TRIALS; trial++) {
            dns.add(dnsTrial());
            kubernetes.add(kubernetesTrial());
        }
        System.out.printf(
                "new pod's first call after scale-up, %d trials: dns:/// + %d ms max connection age: %s ms"
                        + " (median %d); kubernetes:///: %s ms (median %d)%n",
                TRIALS, CONNECTION_AGE.toMillis(), dns, median(dns), kubernetes, median(kubernetes));
        assertThat(kubernetes).allSatisfy(ms -> assertThat(ms).isLessThan(1000));
        // DNS waits for a connection to reach its age: bounded by the age (plus gRPC's 10 % jitter).
        assertThat(dns).allSatisfy(ms -> assertThat(ms).isLessThan(CONNECTION_AGE.toMillis() * 3));
    }

    private long dnsTrial() throws Exception {
        try (Backends backends = new Backends(CONNECTION_AGE)) {
            HeadlessDnsStandIn dns = new HeadlessDnsStandIn(List.of(A, B), backends.port);
            return measure(backends, dns, "headless:///who", () -> dns.answer(List.of(A, B, C)));
        }
    }

    private long kubernetesTrial() throws Exception {
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

    /** Milliseconds from {@code scaleUp} to the first call answered by the new pod. */
    @SuppressWarnings("deprecation") // nameResolverFactory: this channel alone gets the provider under test
    private static long measure(Backends backends, NameResolver.Factory resolver, String target, Runnable scaleUp)
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
            await().atMost(CONNECTION_AGE.multipliedBy(5))
                    .pollInterval(Duration.ofMillis(2))
                    .until(() -> caller.firstAnswerNanos.containsKey(C));
            assertThat(caller.failed).hasValue(0);
            return (caller.firstAnswerNanos.get(C) - start) / 1_000_000;
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
