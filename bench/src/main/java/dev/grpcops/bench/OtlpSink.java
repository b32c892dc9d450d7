package dev.grpcops.bench;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An OTLP/HTTP trace receiver that keeps nothing: it answers {@code POST /v1/traces} with success
 * and counts the spans, so that a traced contender pays for exporting as it would to a collector.
 * {@code GET /count} answers the number of spans received so far.
 */
final class OtlpSink {

    private OtlpSink() {}

    static void main(String[] args) throws IOException, InterruptedException {
        if (args.length != 1) {
            throw new IllegalArgumentException("otlp-sink needs PORT");
        }
        int port = Servers.port(args[0]);
        AtomicLong spans = new AtomicLong();
        Map<String, AtomicLong> byService = new ConcurrentSkipListMap<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setExecutor(Executors.newSingleThreadExecutor());
        server.createContext("/v1/traces", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
                for (ResourceSpans resource : request.getResourceSpansList()) {
                    String service = resource.getResource().getAttributesList().stream()
                            .filter(attribute -> attribute.getKey().equals("service.name"))
                            .map(attribute -> attribute.getValue().getStringValue())
                            .findFirst()
                            .orElse("?");
                    long received = 0;
                    for (ScopeSpans scope : resource.getScopeSpansList()) {
                        received += scope.getSpansCount();
                    }
                    spans.addAndGet(received);
                    byService.computeIfAbsent(service, s -> new AtomicLong()).addAndGet(received);
                }
                exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, -1);
            } catch (IOException | RuntimeException unreadable) {
                exchange.sendResponseHeaders(400, -1);
            } finally {
                exchange.close();
            }
        });
        server.createContext("/count", exchange -> {
            byte[] count = (spans.get() + "\n").getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, count.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(count);
            }
        });
        server.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.stop(0);
                            System.out.println("otlp-sink received " + spans.get() + " spans: " + byService);
                            stopped.countDown();
                        },
                        "otlp-sink-stop"));
        System.out.println("bench otlp-sink listening on 127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }
}
