package dev.grpcops.spring.warmup;

import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import dev.grpcops.warmup.WarmUp;
import dev.grpcops.warmup.WarmUpResult;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.protobuf.ProtoMethodDescriptorSupplier;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Sends the configured warm-up calls to the server through its own port, then lets it report
 * SERVING. A misconfigured call (unknown method, request that does not parse) stops the start,
 * naming the property; calls that fail are logged and do not hold SERVING back beyond the time limit.
 */
public final class WarmUpBeforeServing {

    private static final Logger log = LoggerFactory.getLogger(WarmUpBeforeServing.class);

    private final WarmUpProperties properties;
    private final boolean plaintext;
    private final AtomicReference<WarmUpResult> last = new AtomicReference<>();

    public WarmUpBeforeServing(WarmUpProperties properties, boolean plaintext, ObjectProvider<MeterRegistry> registry) {
        this.properties = properties;
        this.plaintext = plaintext;
        registry.ifAvailable(meters -> Gauge.builder(
                        "grpc.server.warmup",
                        last,
                        ref -> ref.get() == null ? Double.NaN : ref.get().took().toNanos() / 1e9)
                .description("How long the warm-up before SERVING took, seconds")
                .baseUnit("seconds")
                .register(meters));
    }

    /**
     * Runs the warm-up for {@code server}, listening on {@code address} ({@code *},
     * {@code 0.0.0.0} or {@code ::} for every interface) and {@code port}, then {@code serving}.
     */
    public void warmUpThen(Server server, String address, int port, Runnable serving) {
        if (!properties.isEnabled() || properties.getCalls().isEmpty()) {
            serving.run();
            return;
        }
        WarmUp warmUp = build(server);
        if (port <= 0 || !plaintext) {
            log.warn("warm-up: skipped, it needs the server's plaintext port (port {}, TLS {})", port, !plaintext);
            serving.run();
            return;
        }
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(
                        loopbackOr(address), port, InsecureChannelCredentials.create())
                .build();
        log.info("warm-up: {} calls before SERVING", warmUp.size());
        warmUp.run(channel).whenComplete((result, never) -> {
            channel.shutdownNow();
            last.set(result);
            String statuses = result.statuses().entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue())
                    .collect(Collectors.joining(", "));
            if (result.ok() == result.calls() && !result.cutShort()) {
                log.info(
                        "warm-up: {} calls in {} ms ({})",
                        result.calls(),
                        result.took().toMillis(),
                        statuses);
            } else {
                log.warn(
                        "warm-up: {} of {} calls sent in {} ms ({}){}",
                        result.calls(),
                        warmUp.size(),
                        result.took().toMillis(),
                        statuses,
                        result.cutShort() ? ", stopped by grpcops.warmup.time-limit" : "");
            }
            serving.run();
        });
    }

    /**
     * Where to reach a server listening on {@code address}: itself, or loopback for a wildcard.
     * {@code address} as an integration reports it: a host ({@code 127.0.0.3}, {@code *}) or a bound
     * socket address ({@code /[0:0:0:0:0:0:0:0]:50051}, {@code localhost/127.0.0.1:50051}).
     */
    static String loopbackOr(String address) {
        String host = address == null ? "" : address.strip();
        int slash = host.lastIndexOf('/');
        if (slash >= 0) {
            host = host.substring(slash + 1);
        }
        if (host.startsWith("[")) {
            int close = host.indexOf(']');
            host = close > 0 ? host.substring(1, close) : host.substring(1);
        } else if (host.indexOf(':') >= 0 && host.indexOf(':') == host.lastIndexOf(':')) {
            host = host.substring(0, host.indexOf(':')); // host:port
        }
        if (host.isBlank()
                || host.equals("*")
                || host.equals("0.0.0.0")
                || host.equals("::")
                || host.equals("0:0:0:0:0:0:0:0")) {
            return "127.0.0.1";
        }
        return host;
    }

    /** The WarmUp for this server's methods; fails naming the property when one is wrong. */
    WarmUp build(Server server) {
        Map<String, ServerMethodDefinition<?, ?>> methods = server.getServices().stream()
                .map(ServerServiceDefinition::getMethods)
                .flatMap(java.util.Collection::stream)
                .collect(Collectors.toMap(m -> m.getMethodDescriptor().getFullMethodName(), m -> m, (a, b) -> a));
        WarmUp.Builder builder = WarmUp.builder()
                .concurrency(properties.getConcurrency())
                .deadline(properties.getDeadline())
                .timeLimit(properties.getTimeLimit());
        List<WarmUpProperties.Call> calls = properties.getCalls();
        for (int i = 0; i < calls.size(); i++) {
            add(builder, methods, calls.get(i), "grpcops.warmup.calls[" + i + "]");
        }
        return builder.build();
    }

    private static void add(
            WarmUp.Builder builder,
            Map<String, ServerMethodDefinition<?, ?>> methods,
            WarmUpProperties.Call call,
            String property) {
        if (call.getMethod() == null || call.getMethod().isBlank()) {
            throw new IllegalStateException(property + ".method is not set: give a method's full name, one of "
                    + methods.keySet().stream().sorted().toList());
        }
        ServerMethodDefinition<?, ?> definition = methods.get(call.getMethod().replaceFirst("^/", ""));
        if (definition == null) {
            throw new IllegalStateException(property + ".method: this server has no method '" + call.getMethod()
                    + "'; it serves " + methods.keySet().stream().sorted().toList());
        }
        addTyped(builder, definition.getMethodDescriptor(), call, property);
    }

    private static void addTyped(
            WarmUp.Builder builder, MethodDescriptor<?, ?> method, WarmUpProperties.Call call, String property) {
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
            throw new IllegalStateException(property + ".method: " + method.getFullMethodName()
                    + " is not unary; warm-up sends unary calls only");
        }
        Descriptors.Descriptor type = requestType(method);
        if (type == null) {
            throw new IllegalStateException(property + ".method: " + method.getFullMethodName()
                    + " does not take protobuf messages; its request cannot be written as JSON");
        }
        DynamicMessage.Builder request = DynamicMessage.newBuilder(type);
        try {
            JsonFormat.parser().merge(call.getRequest() == null ? "{}" : call.getRequest(), request);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new IllegalStateException(
                    property + ".request: not a " + type.getFullName() + " in JSON: " + e.getMessage(), e);
        }
        // Sent as bytes: the server's own marshallers may be wrapped (malformed-request guard).
        MethodDescriptor<byte[], byte[]> bytes = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(method.getFullMethodName())
                .setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES)
                .build();
        builder.call(bytes, request.build().toByteArray(), call.getCount());
    }

    /** The request's protobuf type, from the method's schema descriptor or its request prototype. */
    private static Descriptors.Descriptor requestType(MethodDescriptor<?, ?> method) {
        if (method.getSchemaDescriptor() instanceof ProtoMethodDescriptorSupplier schema) {
            return schema.getMethodDescriptor().getInputType();
        }
        if (method.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> marshaller
                && marshaller.getMessagePrototype() instanceof Message prototype) {
            return prototype.getDescriptorForType();
        }
        return null;
    }

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try (stream) {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw Status.INTERNAL
                        .withDescription("warm-up: reading a reply")
                        .withCause(e)
                        .asRuntimeException();
            }
        }
    };

    /** Statuses of the last warm-up, for tests. */
    WarmUpResult last() {
        return last.get();
    }
}
