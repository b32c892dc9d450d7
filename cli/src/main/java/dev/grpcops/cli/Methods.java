package dev.grpcops.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.stream.Collectors;

/** The unary methods that {@code grpcops load} and {@code grpcops call} can call, by full or short name. */
final class Methods {

    /** One callable method: its descriptor, and the empty request that JSON is parsed onto. */
    record Method(MethodDescriptor<Message, Message> descriptor, Message emptyRequest) {

        String fullName() {
            return descriptor.getFullMethodName();
        }

        String shortName() {
            return descriptor.getBareMethodName();
        }

        /** The request for {@code json} (protobuf JSON); empty or null means the empty request. */
        Message request(String json) throws InvalidProtocolBufferException {
            if (json == null || json.isBlank()) {
                return emptyRequest;
            }
            Message.Builder builder = emptyRequest.newBuilderForType();
            JsonFormat.parser().merge(json, builder);
            return builder.build();
        }
    }

    static final List<Method> ALL = List.of(
            method(EdgeGrpc.getCheckoutMethod()),
            method(PricingGrpc.getQuoteMethod()),
            method(StockGrpc.getCheckMethod()),
            method(StockGrpc.getStatsMethod()),
            method(WhoAmIGrpc.getWhoMethod()),
            method(FaultsGrpc.getGetMethod()));

    private Methods() {}

    /**
     * The method named {@code name}: {@code chain.v1.Stock/Check}, {@code /chain.v1.Stock/Check}
     * or {@code Check}; throws with the list of known methods otherwise.
     */
    static Method find(String name) {
        String wanted = name.startsWith("/") ? name.substring(1) : name;
        for (Method method : ALL) {
            if (method.fullName().equals(wanted) || method.shortName().equals(wanted)) {
                return method;
            }
        }
        throw new IllegalArgumentException("unknown method '" + name + "'; known: " + known());
    }

    static String known() {
        return ALL.stream().map(m -> m.fullName() + " (" + m.shortName() + ")").collect(Collectors.joining(", "));
    }

    @SuppressWarnings("unchecked")
    private static Method method(MethodDescriptor<? extends Message, ? extends Message> descriptor) {
        MethodDescriptor<Message, Message> untyped =
                (MethodDescriptor<Message, Message>) (MethodDescriptor<?, ?>) descriptor;
        MethodDescriptor.PrototypeMarshaller<?> requests =
                (MethodDescriptor.PrototypeMarshaller<?>) descriptor.getRequestMarshaller();
        return new Method(untyped, (Message) requests.getMessagePrototype());
    }
}
