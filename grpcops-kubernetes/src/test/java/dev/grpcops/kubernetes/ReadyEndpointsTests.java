package dev.grpcops.kubernetes;

import static dev.grpcops.kubernetes.Slices.endpoint;
import static dev.grpcops.kubernetes.Slices.notReady;
import static dev.grpcops.kubernetes.Slices.ready;
import static dev.grpcops.kubernetes.Slices.slice;
import static dev.grpcops.kubernetes.Slices.terminating;
import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.kubernetes.ReadyEndpoints.Resolution;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.grpc.EquivalentAddressGroup;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadyEndpointsTests {

    private static final KubernetesTarget BY_NAME =
            KubernetesTarget.parse("kubernetes:///who.ns:grpc", "", "/who.ns:grpc", () -> "x");
    private static final KubernetesTarget BY_NUMBER =
            KubernetesTarget.parse("kubernetes:///who.ns:8080", "", "/who.ns:8080", () -> "x");

    @Test
    void onlyReadyEndpointsThatAreNotTerminatingOnePerPod() {
        Resolution resolution = ReadyEndpoints.of(
                BY_NAME,
                List.of(slice(
                        "who",
                        "s1",
                        "grpc",
                        8080,
                        ready("10.0.0.3"),
                        notReady("10.0.0.4"),
                        terminating("10.0.0.5"),
                        endpoint("10.0.0.6", null, null),
                        endpoint("10.0.0.7", true, true),
                        ready("10.0.0.1"))));
        assertThat(ips(resolution)).containsExactly("10.0.0.1:8080", "10.0.0.3:8080", "10.0.0.6:8080");
    }

    @Test
    void byNumberOrByNameAndAnEndpointInTwoSlicesCountsOnce() {
        List<EndpointSlice> slices = List.of(
                slice("who", "s1", "grpc", 8080, ready("10.0.0.1")),
                slice("who", "s2", "grpc", 8080, ready("10.0.0.1"), ready("10.0.0.2")));
        assertThat(ips(ReadyEndpoints.of(BY_NAME, slices))).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
        assertThat(ips(ReadyEndpoints.of(BY_NUMBER, slices))).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
    }

    @Test
    void aPodWithTwoAddressesIsOneGroup() {
        Resolution resolution = ReadyEndpoints.of(
                BY_NAME,
                List.of(slice(
                        "who",
                        "s1",
                        "grpc",
                        8080,
                        new EndpointBuilder(ready("10.0.0.1"))
                                .withAddresses("10.0.0.1", "10.0.0.9")
                                .build())));
        assertThat(resolution.addresses()).hasSize(1);
        assertThat(resolution.addresses().get(0).getAddresses()).hasSize(2);
    }

    @Test
    void fqdnSlicesAndOtherPortsAreLeftOut() {
        EndpointSlice fqdn = new EndpointSliceBuilder(slice("who", "s2", "grpc", 8080, ready("db.example.com")))
                .withAddressType("FQDN")
                .build();
        Resolution resolution =
                ReadyEndpoints.of(BY_NAME, List.of(fqdn, slice("who", "s1", "grpc", 8080, ready("10.0.0.1"))));
        assertThat(ips(resolution)).containsExactly("10.0.0.1:8080");
        assertThat(ReadyEndpoints.of(BY_NAME, List.of(slice("who", "s1", "http", 80, ready("10.0.0.1"))))
                        .error()
                        .getDescription())
                .contains("has no port named 'grpc' (its EndpointSlices have: http=80)");
    }

    @Test
    void noSliceMeansNoServiceAndNoReadyEndpointSaysSo() {
        assertThat(ReadyEndpoints.of(BY_NAME, List.of()).error().getDescription())
                .startsWith("Service 'who' not found in namespace 'ns'");
        assertThat(ReadyEndpoints.of(BY_NAME, List.of(slice("who", "s1", "grpc", 8080, notReady("10.0.0.1"))))
                        .error()
                        .getDescription())
                .startsWith("Service 'who' in namespace 'ns' has no ready endpoint");
        assertThat(ReadyEndpoints.of(BY_NAME, List.of(slice("who", "s1", "grpc", 8080)))
                        .error())
                .isNotNull();
    }

    @Test
    void theSameEndpointsInAnotherOrderAreTheSameResolution() {
        assertThat(ReadyEndpoints.of(
                        BY_NAME, List.of(slice("who", "s1", "grpc", 8080, ready("10.0.0.2"), ready("10.0.0.1")))))
                .isEqualTo(ReadyEndpoints.of(
                        BY_NAME, List.of(slice("who", "s1", "grpc", 8080, ready("10.0.0.1"), ready("10.0.0.2")))));
    }

    private static List<String> ips(Resolution resolution) {
        assertThat(resolution.error()).isNull();
        return resolution.addresses().stream()
                .map(EquivalentAddressGroup::getAddresses)
                .map(a -> (InetSocketAddress) a.get(0))
                .map(a -> a.getHostString() + ":" + a.getPort())
                .toList();
    }
}
