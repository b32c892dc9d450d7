package dev.grpcops.systemtest;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** An OTLP/HTTP trace receiver, as a collector is one: POST /v1/traces, protobuf in, 200 out. */
final class OtlpReceiver implements AutoCloseable {

    /** One received span, with the service that sent it and its attributes as strings. */
    record ReceivedSpan(
            String service,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            Span.SpanKind kind,
            Map<String, String> attributes) {

        String attribute(String key) {
            return attributes.get(key);
        }
    }

    final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
    private final HttpServer server;

    OtlpReceiver(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/v1/traces", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
                for (ResourceSpans resource : request.getResourceSpansList()) {
                    String service = resource.getResource().getAttributesList().stream()
                            .filter(attribute -> attribute.getKey().equals("service.name"))
                            .map(attribute -> attribute.getValue().getStringValue())
                            .findFirst()
                            .orElse("?");
                    for (ScopeSpans scope : resource.getScopeSpansList()) {
                        for (Span span : scope.getSpansList()) {
                            spans.add(new ReceivedSpan(
                                    service,
                                    hex(span.getTraceId().toByteArray()),
                                    hex(span.getSpanId().toByteArray()),
                                    hex(span.getParentSpanId().toByteArray()),
                                    span.getName(),
                                    span.getKind(),
                                    attributes(span.getAttributesList())));
                        }
                    }
                }
                exchange.sendResponseHeaders(200, -1);
            } catch (IOException | RuntimeException e) {
                exchange.sendResponseHeaders(400, -1);
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    String endpoint() {
        return "http://127.0.0.1:" + port() + "/v1/traces";
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private static Map<String, String> attributes(List<KeyValue> attributes) {
        return attributes.stream().collect(Collectors.toMap(KeyValue::getKey, a -> text(a.getValue()), (a, b) -> b));
    }

    private static String text(AnyValue value) {
        return switch (value.getValueCase()) {
            case STRING_VALUE -> value.getStringValue();
            case BOOL_VALUE -> Boolean.toString(value.getBoolValue());
            case INT_VALUE -> Long.toString(value.getIntValue());
            case DOUBLE_VALUE -> Double.toString(value.getDoubleValue());
            default -> value.toString();
        };
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
