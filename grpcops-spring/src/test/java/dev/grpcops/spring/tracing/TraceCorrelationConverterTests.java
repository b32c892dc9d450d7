package dev.grpcops.spring.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** A line logged while serving carries the call's trace and span ids, sampled or not; others blanks. */
@Timeout(30)
class TraceCorrelationConverterTests {

    @Test
    void aLineWrittenWhileServingCarriesTheTraceId() throws Exception {
        assertThat(TraceCorrelationConverter.register()).isTrue();
        LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
        PatternLayout layout = new PatternLayout();
        layout.setContext(logging);
        layout.setPattern("%" + TraceCorrelationConverter.WORD + "%m");
        layout.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                lines.add(layout.doLayout(event));
            }
        };
        appender.setContext(logging);
        appender.start();
        Logger logger = logging.getLogger("correlation-test");
        logger.addAppender(appender);

        // Not sampled: the trace id is still the one every hop logs.
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .setSampler(Sampler.parentBased(Sampler.alwaysOff()))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        GrpcTracing tracing = GrpcTracing.builder(sdk).build();
        String name = InProcessServerBuilder.generateName();
        Server server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new StockGrpc.StockImplBase() {
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                                logger.info("serving");
                                responses.onNext(CheckReply.getDefaultInstance());
                                responses.onCompleted();
                            }
                        },
                        tracing.servedCalls()))
                .build()
                .start();
        ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
        try {
            Metadata headers = new Metadata();
            headers.put(
                    Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
            StockGrpc.newBlockingStub(channel)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .check(CheckRequest.getDefaultInstance());
            logger.info("not serving");
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
            logger.detachAppender(appender);
        }
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).matches("\\[4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}\\] serving");
        assertThat(lines.get(1)).isEqualTo("[" + " ".repeat(32) + "-" + " ".repeat(16) + "] not serving");
    }
}
