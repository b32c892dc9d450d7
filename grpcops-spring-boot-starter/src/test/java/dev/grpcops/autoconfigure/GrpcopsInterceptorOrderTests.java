package dev.grpcops.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.ChannelStack;
import dev.grpcops.ServerStack;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.common.util.InterceptorOrder;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.Order;

/**
 * The order of the library's global interceptors (design §2, "Interceptor order"): the constants
 * keep the core's order ({@link ServerStack.Layer}, {@link ChannelStack.Layer}), among themselves
 * and around net.devh's metrics and tracing interceptors, and every global interceptor an auto-configuration declares takes its place from
 * one of them.
 */
@Timeout(30)
class GrpcopsInterceptorOrderTests {

    private static final Set<String> SERVER_CONSTANTS = Set.of(
            "WARM_UP",
            "TRACE_CONTEXT",
            "BUDGET",
            "ADMISSION",
            "TRACE_TAGS",
            "FAULTS",
            "IN_FLIGHT",
            "ADMIN_AUTHORIZATION");
    private static final Set<String> CLIENT_CONSTANTS =
            Set.of("RETRY_ATTEMPTS", "BUDGET_CLIENT", "CALLER_FORWARDING", "TRACE_ATTEMPT_TAGS");

    /** GrpcopsInterceptorOrder's public int constants, by name. */
    private static Map<String, Integer> constants() throws IllegalAccessException {
        Map<String, Integer> constants = new LinkedHashMap<>();
        for (Field field : GrpcopsInterceptorOrder.class.getDeclaredFields()) {
            int modifiers = field.getModifiers();
            if (Modifier.isPublic(modifiers) && Modifier.isStatic(modifiers) && field.getType() == int.class) {
                constants.put(field.getName(), field.getInt(null));
            }
        }
        return constants;
    }

    /** The @Order of net.devh's bean method {@code method} in its auto-configuration {@code type}. */
    private static int netDevhOrder(String type, String method) throws ClassNotFoundException {
        Class<?> configuration = Class.forName(type);
        Method bean = Arrays.stream(configuration.getDeclaredMethods())
                .filter(m -> m.getName().equals(method))
                .findFirst()
                .orElseThrow(() -> new AssertionError(type + " has no bean method " + method));
        Order order = bean.getAnnotation(Order.class);
        assertThat(order).as("net.devh's %s.%s has an @Order", type, method).isNotNull();
        return order.value();
    }

    @Test
    void everyConstantIsAServerOrAClientOne() throws Exception {
        Set<String> known = new TreeSet<>(SERVER_CONSTANTS);
        known.addAll(CLIENT_CONSTANTS);
        // A new constant must be placed in the order below: this test then names it.
        assertThat(constants().keySet()).containsExactlyInAnyOrderElementsOf(known);
    }

    /**
     * Server, outermost first: {@link ServerStack.Layer}'s order, with net.devh's metrics and tracing
     * right inside admin authorization (a refused admin call costs nothing more).
     */
    @Test
    void serverInterceptorsRunInTheOrderTheDesignRequires() throws Exception {
        int metrics = netDevhOrder(
                "net.devh.boot.grpc.server.autoconfigure.GrpcServerMetricAutoConfiguration",
                "metricCollectingServerInterceptor");
        int tracing = netDevhOrder(
                "net.devh.boot.grpc.server.autoconfigure.GrpcServerMicrometerTraceAutoConfiguration",
                "globalObservationGrpcServerInterceptorConfigurer");
        assertThat(metrics).isEqualTo(InterceptorOrder.ORDER_TRACING_METRICS);

        List<Integer> outermostFirst = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (ServerStack.Layer layer : ServerStack.Layer.values()) {
            outermostFirst.add(GrpcopsInterceptorOrder.of(layer));
            names.add(layer.name());
            if (layer == ServerStack.Layer.ADMIN_AUTHORIZATION) {
                outermostFirst.addAll(List.of(metrics, tracing));
                names.addAll(List.of("metrics", "tracing"));
            }
        }
        assertThat(outermostFirst)
                .as(String.join(", ", names))
                .isSortedAccordingTo(Integer::compare)
                .doesNotHaveDuplicates();
    }

    /**
     * Client, outermost first: net.devh's metrics and tracing, then {@link ChannelStack.Layer}'s
     * order; the last three are on each channel's builder, inside every global interceptor.
     */
    @Test
    void clientInterceptorsRunInTheOrderTheDesignRequires() throws Exception {
        int metrics = netDevhOrder(
                "net.devh.boot.grpc.client.autoconfigure.GrpcClientMetricAutoConfiguration",
                "metricCollectingClientInterceptor");
        int tracing = netDevhOrder(
                "net.devh.boot.grpc.client.autoconfigure.GrpcClientMicrometerTraceAutoConfiguration",
                "globalObservationClientInterceptorConfigurer");

        List<Integer> outermostFirst = new ArrayList<>(List.of(metrics, tracing));
        List<String> names = new ArrayList<>(List.of("metrics", "tracing"));
        for (ChannelStack.Layer layer : ChannelStack.Layer.values()) {
            outermostFirst.add(GrpcopsInterceptorOrder.of(layer));
            names.add(layer.name());
        }
        assertThat(outermostFirst).as(String.join(", ", names)).isSortedAccordingTo(Integer::compare);
        assertThat(outermostFirst.subList(0, outermostFirst.size() - 3))
                .as("the global ones")
                .doesNotHaveDuplicates();
    }

    /** A global interceptor bean method found in an auto-configuration. */
    private record InterceptorBean(String where, boolean server, Integer order) {}

    private static void collect(Class<?> type, List<InterceptorBean> found) {
        for (Method method : type.getDeclaredMethods()) {
            boolean server = AnnotatedElementUtils.hasAnnotation(method, GrpcGlobalServerInterceptor.class);
            boolean client = AnnotatedElementUtils.hasAnnotation(method, GrpcGlobalClientInterceptor.class);
            if (!server && !client) {
                continue;
            }
            String where = type.getName() + "." + method.getName();
            assertThat(AnnotatedElementUtils.hasAnnotation(method, Bean.class))
                    .as(where + " is a @Bean")
                    .isTrue();
            assertThat(server && client)
                    .as(where + " is a server or a client interceptor, not both")
                    .isFalse();
            Order order = AnnotatedElementUtils.findMergedAnnotation(method, Order.class);
            found.add(new InterceptorBean(where, server, order == null ? null : order.value()));
        }
        for (Class<?> nested : type.getDeclaredClasses()) {
            collect(nested, found);
        }
    }

    @Test
    void everyGlobalInterceptorOfTheAutoConfigurationsIsPlacedByAConstant() throws Exception {
        List<String> autoConfigurations = new ArrayList<>();
        ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
                .forEach(name -> {
                    if (name.startsWith("dev.grpcops.")) {
                        autoConfigurations.add(name);
                    }
                });
        assertThat(autoConfigurations)
                .as("the starter's AutoConfiguration.imports")
                .contains("dev.grpcops.autoconfigure.admission.AdmissionAutoConfiguration");

        List<InterceptorBean> beans = new ArrayList<>();
        for (String name : autoConfigurations) {
            collect(Class.forName(name), beans);
        }
        Map<String, Integer> constants = constants();
        Set<Integer> serverOrders = constants.entrySet().stream()
                .filter(e -> SERVER_CONSTANTS.contains(e.getKey()))
                .map(Map.Entry::getValue)
                .collect(Collectors.toSet());
        Set<Integer> clientOrders = constants.entrySet().stream()
                .filter(e -> CLIENT_CONSTANTS.contains(e.getKey()))
                .map(Map.Entry::getValue)
                .collect(Collectors.toSet());

        assertThat(beans).as("global interceptor beans found").hasSizeGreaterThanOrEqualTo(10);
        assertThat(beans).allSatisfy(bean -> {
            assertThat(bean.order()).as(bean.where() + " has @Order").isNotNull();
            assertThat(constants.values())
                    .as(bean.where() + "'s @Order is one of GrpcopsInterceptorOrder's constants")
                    .contains(bean.order());
            assertThat(bean.server() ? serverOrders : clientOrders)
                    .as(bean.where() + "'s @Order is one of the " + (bean.server() ? "server" : "client")
                            + " constants")
                    .contains(bean.order());
        });
        // And no constant is left without the interceptor it places.
        Set<Integer> used = beans.stream().map(InterceptorBean::order).collect(Collectors.toSet());
        assertThat(used).as("orders the beans use").containsAll(constants.values());
    }
}
