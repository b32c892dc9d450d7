package dev.grpcops.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.ChannelStack;
import dev.grpcops.ServerStack;
import dev.grpcops.spring.LayerOffsets;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.annotation.Order;

/**
 * The library's global interceptors sit where the net.devh starter puts them relative to its
 * metrics interceptor, here relative to Spring gRPC's observation interceptor: each bean's
 * {@code @Order} is the observation's plus the layer's offset.
 */
@Timeout(10)
class GrpcopsInterceptorOrderTests {

    /** The @Order of bean method {@code method} of {@code type}. */
    private static int order(String type, String method) throws ClassNotFoundException {
        Method bean = Arrays.stream(Class.forName(type).getDeclaredMethods())
                .filter(m -> m.getName().equals(method))
                .findFirst()
                .orElseThrow(() -> new AssertionError(type + " has no bean method " + method));
        Order order = bean.getAnnotation(Order.class);
        assertThat(order).as("%s.%s has an @Order", type, method).isNotNull();
        return order.value();
    }

    @Test
    void observationIsWhereSpringGrpcPutsIt() throws Exception {
        assertThat(order(
                        "org.springframework.boot.grpc.server.autoconfigure.GrpcServerObservationAutoConfiguration",
                        "grpcServerObservationInterceptor"))
                .isEqualTo(GrpcopsInterceptorOrder.OBSERVATION);
    }

    @Test
    void springGrpcsClientObservationHasNoOrderSoItRunsInsideEveryGlobalClientLayer() throws Exception {
        Method bean = Arrays.stream(Class.forName(
                                "org.springframework.boot.grpc.client.autoconfigure.GrpcClientObservationAutoConfiguration")
                        .getDeclaredMethods())
                .filter(m -> m.getName().equals("grpcClientObservationInterceptor"))
                .findFirst()
                .orElseThrow();
        assertThat(bean.getAnnotation(Order.class))
                .as("GrpcopsInterceptorOrder says Spring gRPC's client observation is innermost")
                .isNull();
    }

    @Test
    void everyServerLayerIsAtTheObservationsOrderPlusItsOffset() throws Exception {
        Map<ServerStack.Layer, String[]> beans = Map.of(
                ServerStack.Layer.ADMIN_AUTHORIZATION,
                        new String[] {"admin.AdminAutoConfiguration", "grpcopsAdminAuthorizationInterceptor"},
                ServerStack.Layer.WARM_UP, new String[] {"warmup.WarmUpAutoConfiguration", "grpcopsWarmUpMark"},
                ServerStack.Layer.BUDGET,
                        new String[] {"budget.BudgetAutoConfiguration$ServerSide", "grpcopsBudgetServerInterceptor"},
                ServerStack.Layer.ADMISSION,
                        new String[] {"admission.AdmissionAutoConfiguration", "grpcopsAdmissionInterceptor"},
                ServerStack.Layer.FAULTS, new String[] {"fault.FaultAutoConfiguration", "grpcopsFaultInterceptor"},
                ServerStack.Layer.IN_FLIGHT, new String[] {"shutdown.ShutdownAutoConfiguration", "inFlightCalls"},
                ServerStack.Layer.TRACE_CONTEXT,
                        new String[] {"tracing.TracingAutoConfiguration$LibrarySpans$ServerSide", "grpcopsServedCallSpans"},
                ServerStack.Layer.TRACE_TAGS,
                        new String[] {"tracing.TracingAutoConfiguration$LibrarySpans$ServerSide", "grpcopsServedCallTags"});
        for (Map.Entry<ServerStack.Layer, String[]> bean : beans.entrySet()) {
            assertThat(order("dev.grpcops.springgrpc." + bean.getValue()[0], bean.getValue()[1]))
                    .as(bean.getKey().name())
                    .isEqualTo(GrpcopsInterceptorOrder.OBSERVATION + LayerOffsets.of(bean.getKey()));
        }
        assertThat(beans.keySet()).as("every server layer Spring gRPC registers").hasSize(ServerStack.Layer.values().length);
    }

    @Test
    void everyGlobalClientLayerIsAtTheObservationsOrderPlusItsOffset() throws Exception {
        Map<ChannelStack.Layer, String[]> beans = Map.of(
                ChannelStack.Layer.RETRY_ATTEMPTS,
                        new String[] {"retry.RetryAutoConfiguration$ClientSide", "grpcopsRetryAttemptInterceptor"},
                ChannelStack.Layer.BUDGET,
                        new String[] {"budget.BudgetAutoConfiguration$ClientSide", "grpcopsBudgetClientInterceptor"},
                ChannelStack.Layer.CALLER_FORWARDING,
                        new String[] {
                            "admission.AdmissionAutoConfiguration$ClientSide", "grpcopsCallerForwardingInterceptor"
                        },
                ChannelStack.Layer.TRACE_ATTEMPT,
                        new String[] {"tracing.TracingAutoConfiguration$LibrarySpans$ClientSide", "grpcopsAttemptSpans"});
        for (Map.Entry<ChannelStack.Layer, String[]> bean : beans.entrySet()) {
            assertThat(order("dev.grpcops.springgrpc." + bean.getValue()[0], bean.getValue()[1]))
                    .as(bean.getKey().name())
                    .isEqualTo(GrpcopsInterceptorOrder.OBSERVATION + LayerOffsets.of(bean.getKey()));
        }
    }
}
