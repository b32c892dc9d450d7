package dev.grpcops.bench.policies;

import dev.grpcops.client.ServiceConfigs;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A client balancing policy as a service config's {@code loadBalancingConfig} names it. Only names
 * and config maps: the policies themselves are registered by grpc-java, grpc-xds and grpcops-core.
 */
@SuppressWarnings("unchecked")
record Policy(String name, Map<String, ?> config) {

    static final Policy ROUND_ROBIN = of("round_robin", Map.of());
    static final Policy LEAST_REQUEST = of("least_request_experimental", ordered("choiceCount", 2.0));
    /** gRFC A58, weights from per-call ORCA reports: 1 s blackout, so a fresh channel starts as round_robin. */
    static final Policy WEIGHTED_ROUND_ROBIN = of(
            "weighted_round_robin",
            ordered(
                    "blackoutPeriod",
                    "1s",
                    "weightUpdatePeriod",
                    "0.1s",
                    "weightExpirationPeriod",
                    "180s",
                    "enableOobLoadReport",
                    false));
    /** As the suite's channels balance, without and with their outlier detection (grpcops-core's ServiceConfigs). */
    static final Policy PEAK_EWMA =
            project("grpcops_peak_ewma", ServiceConfigs.builder().outlierDetection(null));

    static final Policy ROUND_ROBIN_OD =
            project("round_robin+od", ServiceConfigs.builder().balancing(ServiceConfigs.Balancing.ROUND_ROBIN));
    static final Policy PEAK_EWMA_OD = project("grpcops_peak_ewma+od", ServiceConfigs.builder());

    /** All, in the order the report shows them; "+od": under outlier detection. */
    static final List<Policy> ALL =
            List.of(ROUND_ROBIN, LEAST_REQUEST, WEIGHTED_ROUND_ROBIN, PEAK_EWMA, ROUND_ROBIN_OD, PEAK_EWMA_OD);

    private static Policy of(String name, Map<String, ?> config) {
        return new Policy(name, Map.of(name, config));
    }

    /** The policy the project's own service config names, exactly as its channels get it. */
    private static Policy project(String name, ServiceConfigs.Builder builder) {
        List<?> policies = (List<?>) builder.build().get("loadBalancingConfig");
        return new Policy(name, (Map<String, ?>) policies.get(0));
    }

    /** A channel's default service config: this policy only. */
    Map<String, ?> serviceConfig() {
        return Map.of("loadBalancingConfig", List.of(config));
    }

    /** The config as it would be written in a service config. */
    String json() {
        return json(config);
    }

    private static String json(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream()
                    .map(e -> "\"" + e.getKey() + "\":" + json(e.getValue()))
                    .collect(Collectors.joining(",", "{", "}"));
        }
        if (value instanceof List<?> list) {
            return list.stream().map(Policy::json).collect(Collectors.joining(",", "[", "]"));
        }
        if (value instanceof Double d && d == Math.rint(d)) {
            return Long.toString(d.longValue());
        }
        return value instanceof String ? "\"" + value + "\"" : String.valueOf(value);
    }

    /** Keys in the order given, so the report prints them as written. */
    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }
}
