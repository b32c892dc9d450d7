package dev.grpcops.kubernetes;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.grpc.EquivalentAddressGroup;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/** What a Service's EndpointSlices mean for a channel: its ready endpoints, or why there are none. */
final class ReadyEndpoints {

    private ReadyEndpoints() {}

    /** Addresses for the load balancer, or an error; equal when the channel would see no difference. */
    record Resolution(List<EquivalentAddressGroup> addresses, Status error) {

        static Resolution of(List<EquivalentAddressGroup> addresses) {
            return new Resolution(List.copyOf(addresses), null);
        }

        static Resolution failed(Status error) {
            return new Resolution(null, error);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Resolution other
                    && Objects.equals(addresses, other.addresses)
                    && Objects.equals(describe(error), describe(other.error));
        }

        @Override
        public int hashCode() {
            return Objects.hash(addresses, describe(error));
        }

        private static String describe(Status status) {
            return status == null ? null : status.getCode() + ": " + status.getDescription();
        }
    }

    /**
     * One group per endpoint (a pod; all its addresses), for every endpoint that is ready and not
     * terminating, on the target's port, in a stable order. An endpoint listed by two slices (as
     * while the controller moves it) counts once.
     */
    static Resolution of(KubernetesTarget target, List<EndpointSlice> slices) {
        if (slices.isEmpty()) {
            // The EndpointSlice controller gives every Service with a selector a slice, even with no
            // pods: none at all means there is no such Service (endpointslices is all we may read).
            return Resolution.failed(Status.UNAVAILABLE.withDescription("Service '" + target.service()
                    + "' not found in namespace '" + target.namespace() + "' (no EndpointSlice labelled "
                    + KubernetesNameResolver.SERVICE_NAME_LABEL + "=" + target.service() + "), for target '"
                    + target.text() + "'"));
        }
        Map<String, EquivalentAddressGroup> groups = new LinkedHashMap<>();
        TreeSet<String> ports = new TreeSet<>();
        boolean portFound = false;
        for (EndpointSlice slice : slices) {
            if (!"IPv4".equals(slice.getAddressType()) && !"IPv6".equals(slice.getAddressType())) {
                continue; // FQDN slices name hosts, not pods
            }
            Integer port = port(target, slice, ports);
            if (port == null) {
                continue;
            }
            portFound = true;
            for (Endpoint endpoint : slice.getEndpoints()) {
                if (!ready(endpoint.getConditions()) || endpoint.getAddresses().isEmpty()) {
                    continue;
                }
                List<SocketAddress> addresses = new ArrayList<>();
                for (String ip : endpoint.getAddresses()) {
                    InetSocketAddress address = socketAddress(ip, port);
                    if (address != null) {
                        addresses.add(address);
                    }
                }
                if (addresses.isEmpty()) {
                    continue;
                }
                groups.putIfAbsent(
                        String.join(",", endpoint.getAddresses()) + ":" + port, new EquivalentAddressGroup(addresses));
            }
        }
        if (!portFound) {
            return Resolution.failed(Status.UNAVAILABLE.withDescription("Service '" + target.service()
                    + "' in namespace '" + target.namespace() + "' has no port "
                    + (target.portName() != null ? "named '" + target.portName() + "'" : target.portNumber())
                    + " (its EndpointSlices have: "
                    + (ports.isEmpty() ? "none" : String.join(", ", ports)) + "), for target '" + target.text() + "'"));
        }
        if (groups.isEmpty()) {
            return Resolution.failed(Status.UNAVAILABLE.withDescription("Service '" + target.service()
                    + "' in namespace '" + target.namespace() + "' has no ready endpoint, for target '"
                    + target.text() + "'"));
        }
        List<EquivalentAddressGroup> sorted = new ArrayList<>(groups.values());
        sorted.sort(Comparator.comparing(g -> g.getAddresses().toString()));
        return Resolution.of(sorted);
    }

    /** Ready as Kubernetes means it: {@code ready} unset counts as ready; terminating never does. */
    private static boolean ready(EndpointConditions conditions) {
        if (conditions == null) {
            return true;
        }
        return !Boolean.FALSE.equals(conditions.getReady()) && !Boolean.TRUE.equals(conditions.getTerminating());
    }

    /** The slice's port the target means (by name or by number), or null; every port seen goes to {@code seen}. */
    private static Integer port(KubernetesTarget target, EndpointSlice slice, TreeSet<String> seen) {
        Integer found = null;
        for (EndpointPort port : slice.getPorts()) {
            if (port.getPort() == null
                    || (port.getProtocol() != null && !port.getProtocol().equals("TCP"))) {
                continue;
            }
            String name = port.getName() == null ? "" : port.getName();
            seen.add((name.isEmpty() ? "" : name + "=") + port.getPort());
            boolean matches =
                    target.portName() != null ? target.portName().equals(name) : target.portNumber() == port.getPort();
            if (matches) {
                found = port.getPort();
            }
        }
        return found;
    }

    /** An IP literal, or null: a name here is not looked up (IPv4 and IPv6 slices hold IPs only). */
    private static InetSocketAddress socketAddress(String ip, int port) {
        if (ip == null || !(ip.indexOf(':') >= 0 || ip.chars().allMatch(c -> c == '.' || Character.isDigit(c)))) {
            return null;
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(ip), port);
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
