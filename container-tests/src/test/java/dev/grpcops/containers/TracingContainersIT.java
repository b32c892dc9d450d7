package dev.grpcops.containers;

import static dev.grpcops.systemtest.OtlpReceiver.ms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.systemtest.OtlpReceiver;
import dev.grpcops.systemtest.OtlpReceiver.CheckoutHops;
import dev.grpcops.systemtest.OtlpReceiver.ReceivedSpan;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;

/**
 * Traces from the images, configured as docker-compose.yml configures them: the OpenTelemetry
 * environment variables alone ({@code OTEL_EXPORTER_OTLP_ENDPOINT}, {@code OTEL_TRACES_SAMPLER_ARG}),
 * exporting into a receiver in this test on the containers' network gateway. One Checkout through
 * the three containers is one trace, parented hop by hop, with the budget at every hop.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TracingContainersIT {

    @Test
    void oneCheckoutThroughTheContainersIsOneTraceWithTheBudgetAtEveryHop() throws Exception {
        Docker.requireEngine();
        Network network = Network.newNetwork();
        GenericContainer<?> stock = null;
        GenericContainer<?> pricing = null;
        GenericContainer<?> edge = null;
        try (OtlpReceiver receiver = new OtlpReceiver(gateway(network), 0)) {
            String endpoint = "http://" + gateway(network) + ":" + receiver.port();
            stock = traced(
                    ServiceContainers.service("stock-service", network, "stock", 50061, "chain.v1.Stock"), endpoint);
            pricing = traced(
                            ServiceContainers.service("pricing-service", network, "pricing", 50062, "chain.v1.Pricing"),
                            endpoint)
                    .withCommand("--grpc.client.stock.address=dns:///stock:50061");
            edge = traced(ServiceContainers.service("edge-service", network, "edge", 50063, "chain.v1.Edge"), endpoint)
                    .withCommand("--grpc.client.pricing.address=dns:///pricing:50062");
            stock.start();
            pricing.start();
            edge.start();

            ManagedChannel toEdge = ServiceContainers.channel(edge, 50063);
            try {
                await("a Checkout answered through all three containers")
                        .atMost(Duration.ofSeconds(90))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> EdgeGrpc.newBlockingStub(toEdge)
                                .withDeadlineAfter(10, TimeUnit.SECONDS)
                                .checkout(CheckoutRequest.newBuilder()
                                        .addSkus("warm")
                                        .build())
                                .getLines(0)
                                .getAvailable());
                assertThat(EdgeGrpc.newBlockingStub(toEdge)
                                .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                                .checkout(CheckoutRequest.newBuilder()
                                        .addSkus("traced")
                                        .build())
                                .getLinesList())
                        .extracting(Line::getAvailable)
                        .containsOnly(true);
            } finally {
                toEdge.shutdownNow();
            }

            await("the Checkout's trace from all three containers")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> receiver.checkoutTrace(5000).stream()
                                            .map(ReceivedSpan::service)
                                            .distinct()
                                            .count()
                                    == 3
                            && receiver.checkoutTrace(5000).size() >= 5);
            List<ReceivedSpan> trace = receiver.checkoutTrace(5000);
            CheckoutHops hops = CheckoutHops.of(trace);
            // 1.5 s in at Edge; less the 0.2 s reserve at each hop on the way down.
            assertThat(ms(hops.edgeServed(), "grpcops.budget.remaining_ms")).isCloseTo(1500, within(150.0));
            assertThat(ms(hops.pricingServed(), "grpcops.budget.remaining_ms")).isCloseTo(1300, within(150.0));
            assertThat(ms(hops.stockServed(), "grpcops.budget.remaining_ms")).isCloseTo(1100, within(150.0));
            assertThat(ms(hops.pricingAttempt(), "grpcops.deadline_ms"))
                    .isCloseTo(ms(hops.stockServed(), "grpcops.budget.remaining_ms"), within(50.0));
        } finally {
            ServiceContainers.removeAll(network, edge, pricing, stock);
        }
    }

    /** What docker-compose.yml sets, with every trace sampled and exported at once. */
    private static GenericContainer<?> traced(GenericContainer<?> service, String endpoint) {
        return service.withEnv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
                .withEnv("OTEL_TRACES_SAMPLER_ARG", "1.0")
                .withEnv("MANAGEMENT_TRACING_OPENTELEMETRY_EXPORT_SCHEDULE_DELAY", "100ms");
    }

    /** The host's address on {@code network}: what its containers reach this test at. */
    private static String gateway(Network network) {
        return DockerClientFactory.instance()
                .client()
                .inspectNetworkCmd()
                .withNetworkId(network.getId())
                .exec()
                .getIpam()
                .getConfig()
                .get(0)
                .getGateway();
    }
}
