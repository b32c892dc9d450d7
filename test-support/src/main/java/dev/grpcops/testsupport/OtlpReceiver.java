package dev.grpcops.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.function.DoublePredicate;
import java.util.stream.Collectors;

/**
 * An OTLP/HTTP trace receiver, as a collector is one: POST /v1/traces, protobuf in, 200 out. Shared
 * by the system and container tests (the test-support module).
 */
public final class OtlpReceiver implements AutoCloseable {

    /** One received span, with the service that sent it and its attributes as strings. */
    public record ReceivedSpan(
            String service,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            Span.SpanKind kind,
            Map<String, String> attributes) {

        public String attribute(String key) {
            return attributes.get(key);
        }
    }

    public final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
    private final HttpServer server;

    /** On 127.0.0.1. */
    public OtlpReceiver(int port) throws IOException {
        this("127.0.0.1", port);
    }

    /** On {@code host}: a container network's gateway, for exporters in containers. */
    public OtlpReceiver(String host, int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress(host, port), 0);
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

    public int port() {
        return server.getAddress().getPort();
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port() + "/v1/traces";
    }

    /**
     * Every span of the first trace received whose root is Edge serving a Checkout that arrived with
     * less than {@code budgetMs} of budget (one made with a shorter deadline than the warm-up calls').
     */
    public List<ReceivedSpan> checkoutTrace(double budgetMs) {
        return traceServed("edge-service", "chain.v1.Edge/Checkout", remainingMs -> remainingMs < budgetMs);
    }

    /**
     * Every span of the first trace received whose root is {@code service} serving {@code method}
     * with a budget on arrival, in ms, that {@code remainingMs} accepts: a call told from the others
     * by the deadline it was made with.
     */
    public List<ReceivedSpan> traceServed(String service, String method, DoublePredicate remainingMs) {
        return spans.stream()
                .filter(span -> span.service().equals(service)
                        && span.name().equals(method)
                        && span.kind() == Span.SpanKind.SPAN_KIND_SERVER
                        && span.parentSpanId().isEmpty()
                        && span.attribute("grpcops.budget.remaining_ms") != null)
                .filter(span -> remainingMs.test(Double.parseDouble(span.attribute("grpcops.budget.remaining_ms"))))
                .map(ReceivedSpan::traceId)
                .findFirst()
                .map(traceId -> spans.stream()
                        .filter(span -> span.traceId().equals(traceId))
                        .toList())
                .orElse(List.of());
    }

    /**
     * The five spans of a Checkout of one SKU, each the parent of the next: Edge serving it, Edge's
     * attempt of the Quote, Pricing serving it, Pricing's attempt of the Check, Stock serving it.
     * Fails unless the trace holds exactly one of each, so parented.
     */
    public record CheckoutHops(
            ReceivedSpan edgeServed,
            ReceivedSpan edgeAttempt,
            ReceivedSpan pricingServed,
            ReceivedSpan pricingAttempt,
            ReceivedSpan stockServed) {

        public static CheckoutHops of(List<ReceivedSpan> trace) {
            return of(trace, "pricing-service");
        }

        /** As {@link #of(List)}, with Pricing's spans sent as {@code pricingService}. */
        public static CheckoutHops of(List<ReceivedSpan> trace, String pricingService) {
            CheckoutHops hops = new CheckoutHops(
                    one(trace, "edge-service", Span.SpanKind.SPAN_KIND_SERVER, "chain.v1.Edge/Checkout"),
                    one(trace, "edge-service", Span.SpanKind.SPAN_KIND_CLIENT, "chain.v1.Pricing/Quote"),
                    one(trace, pricingService, Span.SpanKind.SPAN_KIND_SERVER, "chain.v1.Pricing/Quote"),
                    one(trace, pricingService, Span.SpanKind.SPAN_KIND_CLIENT, "chain.v1.Stock/Check"),
                    one(trace, "stock-service", Span.SpanKind.SPAN_KIND_SERVER, "chain.v1.Stock/Check"));
            assertThat(hops.edgeServed.parentSpanId())
                    .as("the test's call is not traced: Edge starts the trace")
                    .isEmpty();
            assertThat(hops.edgeAttempt.parentSpanId()).isEqualTo(hops.edgeServed.spanId());
            assertThat(hops.pricingServed.parentSpanId()).isEqualTo(hops.edgeAttempt.spanId());
            assertThat(hops.pricingAttempt.parentSpanId()).isEqualTo(hops.pricingServed.spanId());
            assertThat(hops.stockServed.parentSpanId()).isEqualTo(hops.pricingAttempt.spanId());
            return hops;
        }
    }

    /** The one span of {@code service} of this kind and name in {@code trace}; fails unless there is exactly one. */
    public static ReceivedSpan one(List<ReceivedSpan> trace, String service, Span.SpanKind kind, String name) {
        List<ReceivedSpan> found = trace.stream()
                .filter(span -> span.service().equals(service)
                        && span.kind() == kind
                        && span.name().equals(name))
                .toList();
        assertThat(found).as("%s %s %s in %s", service, kind, name, trace).hasSize(1);
        return found.get(0);
    }

    /** A numeric attribute of {@code span}; fails when it has none. */
    public static double ms(ReceivedSpan span, String attribute) {
        String value = span.attribute(attribute);
        assertThat(value).as("%s of %s", attribute, span).isNotNull();
        return Double.parseDouble(value);
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
