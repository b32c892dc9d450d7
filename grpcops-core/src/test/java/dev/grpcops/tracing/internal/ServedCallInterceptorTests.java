package dev.grpcops.tracing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.RawBytes;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The served call's span without the budget's or admission's listeners further in (a stack with
 * tracing alone): the interceptor's own listener puts the span in both contexts around the handler.
 */
@Timeout(30)
class ServedCallInterceptorTests {

    private static final MethodDescriptor<byte[], byte[]> ECHO = RawBytes.unary("test.Echo/Call");

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter))
            .build();
    private final List<SpanContext> servedInGrpcContext = new CopyOnWriteArrayList<>();
    private final List<SpanContext> currentInOpenTelemetry = new CopyOnWriteArrayList<>();
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() {
        // Whatever the test got to before it failed.
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
        provider.close();
    }

    @Test
    void withNoContextAttachedFurtherInTheHandlerSeesTheSpanInBothContexts() throws Exception {
        ServerServiceDefinition echo = ServerServiceDefinition.builder("test.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, responses) -> {
                    servedInGrpcContext.add(GrpcTracing.currentSpanContext());
                    currentInOpenTelemetry.add(Span.current().getSpanContext());
                    responses.onNext(request);
                    responses.onCompleted();
                }))
                .build();
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        echo,
                        new ServedCallInterceptor(
                                provider.get("test"), W3CTraceContextPropagator.getInstance(), Set.of())))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();

        byte[] answer = ClientCalls.blockingUnaryCall(channel, ECHO, io.grpc.CallOptions.DEFAULT, new byte[] {1, 2});

        assertThat(answer).containsExactly(1, 2);
        List<SpanData> spans = exporter.getFinishedSpanItems();
        assertThat(spans).hasSize(1);
        SpanContext served = spans.get(0).getSpanContext();
        assertThat(servedInGrpcContext).containsExactly(served);
        assertThat(currentInOpenTelemetry).containsExactly(served);
        assertThat(Span.current().getSpanContext().isValid())
                .as("nothing left current after the call")
                .isFalse();
    }
}
