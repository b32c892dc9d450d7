package dev.grpcops.kubernetes;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Arrays;
import java.util.List;

/** EndpointSlices as the EndpointSlice controller writes them, for tests. */
final class Slices {

    private Slices() {}

    static Endpoint ready(String ip) {
        return endpoint(ip, true, false);
    }

    static Endpoint notReady(String ip) {
        return endpoint(ip, false, false);
    }

    static Endpoint terminating(String ip) {
        return endpoint(ip, false, true);
    }

    static Endpoint endpoint(String ip, Boolean ready, Boolean terminating) {
        return new EndpointBuilder()
                .withAddresses(ip)
                .withNewConditions()
                .withReady(ready)
                .withServing(ready)
                .withTerminating(terminating)
                .endConditions()
                .withNewTargetRef()
                .withKind("Pod")
                .withName("pod-" + ip)
                .endTargetRef()
                .build();
    }

    static EndpointSlice slice(String service, String name, String portName, int port, Endpoint... endpoints) {
        return new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(MockApi.NAMESPACE)
                .addToLabels(KubernetesNameResolver.SERVICE_NAME_LABEL, service)
                .endMetadata()
                .withAddressType("IPv4")
                .addNewPort()
                .withName(portName)
                .withPort(port)
                .withProtocol("TCP")
                .endPort()
                .withEndpoints(Arrays.asList(endpoints))
                .build();
    }

    /** Creates or replaces the slice {@code <service>-abc12}, as the controller updates one. */
    static void put(KubernetesClient client, String service, int port, Endpoint... endpoints) {
        client.resource(slice(service, service + "-abc12", "grpc", port, endpoints))
                .inNamespace(MockApi.NAMESPACE)
                .createOr(existing -> existing.update());
    }

    /** The Service itself (the resolver never reads it; here so that the cluster looks whole). */
    static void service(KubernetesClient client, String service, int port) {
        client.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName(service)
                        .withNamespace(MockApi.NAMESPACE)
                        .endMetadata()
                        .withNewSpec()
                        .withClusterIP("None")
                        .addToSelector("app", service)
                        .addNewPort()
                        .withName("grpc")
                        .withPort(port)
                        .endPort()
                        .endSpec()
                        .build())
                .inNamespace(MockApi.NAMESPACE)
                .create();
    }

    static List<Endpoint> of(Endpoint... endpoints) {
        return List.of(endpoints);
    }
}
