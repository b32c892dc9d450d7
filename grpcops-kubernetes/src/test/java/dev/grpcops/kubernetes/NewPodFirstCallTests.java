package dev.grpcops.kubernetes;

import static dev.grpcops.kubernetes.Slices.notReady;
import static dev.grpcops.kubernetes.Slices.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.client.ServiceConfigs;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * New pods get calls at once under the library's default balancing (peak-EWMA with slow start),
 * through {@code kubernetes:///} on loopback, with one call at a time (the two pods already there
 * idle between calls): a pod that becomes ready answers a call within a second or so, as does a pod
 * ready again after being not ready. Slow start shapes the new pod's share and never makes it none.
 * The times are printed (the benchmark's figures); the bound asserted is wide, for a loaded machine.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NewPodFirstCallTests {

    private static final String A = Backends.IPS.get(0);
    private static final String B = Backends.IPS.get(1);
    private static final String C = Backends.IPS.get(2);
    /** Far more than the second it takes, far less than the 11 s it took when slow start left a pod out. */
    private static final Duration WITHIN = Duration.ofSeconds(5);

    /** How long {@code pod} has been answering the caller, in milliseconds; 0 before its first answer. */
    private static long answeringFor(SteadyCaller caller, String pod) {
        Long first = caller.firstAnswerNanos.get(pod);
        return first == null ? 0 : (System.nanoTime() - first) / 1_000_000;
    }

    @Test
    void aPodThatBecomesReadyAnswersACallAtOnceAsDoesOneReadyAgain() throws Exception {
        try (MockApi api = MockApi.crud();
                Backends backends = new Backends(null)) {
            Slices.put(api.admin(), "who", backends.port, ready(A), ready(B));
            KubernetesNameResolverProvider provider =
                    new KubernetesNameResolverProvider(api::config, ResolverListener.NONE, 4);
            @SuppressWarnings("deprecation") // nameResolverFactory: this channel alone gets the provider under test
            ManagedChannel channel = NettyChannelBuilder.forTarget("kubernetes:///who.grpcops:grpc")
                    .nameResolverFactory(provider)
                    .usePlaintext()
                    .defaultServiceConfig(ServiceConfigs.builder().build())
                    .build();
            try (SteadyCaller caller = new SteadyCaller(channel)) {
                // A and B answering for more than a second: C joins replicas already serving (slow start).
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> answeringFor(caller, A) > 1_500 && answeringFor(caller, B) > 1_500);

                long listed = System.nanoTime();
                Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), ready(C));
                await().atMost(WITHIN).pollInterval(Duration.ofMillis(2)).until(() -> caller.lastAnswer(C) > listed);
                long newPod = (caller.lastAnswer(C) - listed) / 1_000_000;

                Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), notReady(C));
                long notReadyAt = System.nanoTime();
                // Out of the calls for two seconds: back, it is in slow start again (away a second or more).
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> System.nanoTime() - Math.max(notReadyAt, caller.lastAnswer(C)) > 2_000_000_000L);
                int answersBefore = caller.ok.get();
                long readyAgain = System.nanoTime();
                Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), ready(C));
                await().atMost(WITHIN)
                        .pollInterval(Duration.ofMillis(2))
                        .until(() -> caller.lastAnswer(C) > readyAgain);
                long again = (caller.lastAnswer(C) - readyAgain) / 1_000_000;
                System.out.printf(
                        "new pod's first call, one call at a time, peak-EWMA with slow start: listed %d ms;"
                                + " ready again after %d ms not ready: %d ms (%d calls answered meanwhile)%n",
                        newPod, (readyAgain - notReadyAt) / 1_000_000, again, caller.ok.get() - answersBefore);
                assertThat(caller.failed).hasValue(0);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
