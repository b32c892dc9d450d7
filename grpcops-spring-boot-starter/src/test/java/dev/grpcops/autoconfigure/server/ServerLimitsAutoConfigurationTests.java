package dev.grpcops.autoconfigure.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.server.ServerExecutor;
import dev.grpcops.spring.server.ServerLimitsProperties;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

@Timeout(60)
class ServerLimitsAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ServerLimitsAutoConfiguration.class));

    @Test
    void defaults() {
        runner.run(context -> {
            ServerLimitsProperties properties = context.getBean(ServerLimitsProperties.class);
            assertThat(properties.getMaxConcurrentCallsPerConnection()).isEqualTo(1000);
            assertThat(properties.getMaxRstFrames()).isEqualTo(2000);
            assertThat(properties.getRstFramesWindow()).isEqualTo(Duration.ofSeconds(1));
            assertThat(properties.getBadRequestLogInterval()).isEqualTo(Duration.ofSeconds(10));
        });
    }

    @Test
    void badValuesStopStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.server.max-concurrent-calls-per-connection=0")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.server.max-concurrent-calls-per-connection"));
        runner.withPropertyValues("grpcops.server.rst-frames-window=500ms")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.server.rst-frames-window"));
    }

    /** A client opening more calls than the limit gets them served a limit at a time, none refused. */
    @Test
    void oneConnectionHasAtMostTheLimitOfCallsOpen() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(SimpleMeterRegistry.class, () -> registry)
                .withPropertyValues("grpcops.server.max-concurrent-calls-per-connection=5")
                .run(context -> {
                    HeldStock stock = new HeldStock();
                    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                            .addService(stock);
                    context.getBean(GrpcServerConfigurer.class).accept(builder);
                    Server server = builder.build().start();
                    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                            .usePlaintext()
                            .build();
                    try {
                        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
                        for (int i = 0; i < 12; i++) {
                            calls.add(StockGrpc.newFutureStub(channel)
                                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                                    .check(CheckRequest.newBuilder()
                                            .setSku("s" + i)
                                            .build()));
                        }
                        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> stock.open.get() == 5);
                        assertThat(stock.open)
                                .as("calls open on the server at once")
                                .hasValue(5);
                        stock.release.countDown();
                        for (ListenableFuture<CheckReply> call : calls) {
                            assertThat(call.get(20, TimeUnit.SECONDS).getSku()).startsWith("s");
                        }
                        assertThat(stock.maxOpen).hasValue(5);
                    } finally {
                        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                    }
                });
    }

    /**
     * Without direct-executor, handlers run on the bounded executor: a burst of 2000 calls waits
     * for its threads instead of becoming 2000 threads, and its idle threads are not kept.
     */
    @Test
    void aBurstOfCallsRunsOnTheBoundedExecutorsThreadsOnly() {
        runner.withPropertyValues("grpcops.server.executor-threads=3").run(context -> {
            ThreadPoolExecutor executor = context.getBean(ServerExecutor.class).executor();
            assertThat(context.getBeansOfType(java.util.concurrent.Executor.class))
                    .as("no Executor bean: Spring Boot's own applicationTaskExecutor stays")
                    .isEmpty();
            AtomicInteger handlerThreads = new AtomicInteger();
            java.util.Set<String> names = java.util.concurrent.ConcurrentHashMap.newKeySet();
            StockGrpc.StockImplBase stock = new StockGrpc.StockImplBase() {
                @Override
                public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                    if (names.add(Thread.currentThread().getName())) {
                        handlerThreads.incrementAndGet();
                    }
                    responses.onNext(
                            CheckReply.newBuilder().setSku(request.getSku()).build());
                    responses.onCompleted();
                }
            };
            NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(stock);
            context.getBean(GrpcServerConfigurer.class).accept(builder);
            Server server = builder.build().start();
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                    .usePlaintext()
                    .build();
            try {
                List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
                for (int i = 0; i < 2000; i++) {
                    calls.add(StockGrpc.newFutureStub(channel)
                            .withDeadlineAfter(30, TimeUnit.SECONDS)
                            .check(CheckRequest.newBuilder().setSku("s" + i).build()));
                }
                for (ListenableFuture<CheckReply> call : calls) {
                    assertThat(call.get(30, TimeUnit.SECONDS).getSku()).startsWith("s");
                }
                assertThat(names).as("threads that ran handlers").allMatch(name -> name.startsWith("grpcops-server-"));
                assertThat(handlerThreads).as("threads that ran handlers").hasValueLessThanOrEqualTo(3);
                assertThat(executor.getLargestPoolSize()).isLessThanOrEqualTo(3);
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> executor.getActiveCount() == 0);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        });
    }

    /**
     * The executor's queue is bounded: with its one thread held and a queue of 5, further callbacks
     * run on the transport's thread (which holds back its reads) instead of queueing without end,
     * and every call is answered once the handlers are let go.
     */
    @Test
    void theExecutorsQueueIsBoundedAndNothingIsDropped() {
        runner.withPropertyValues("grpcops.server.executor-threads=1", "grpcops.server.executor-queue=5")
                .run(context -> {
                    ThreadPoolExecutor executor =
                            context.getBean(ServerExecutor.class).executor();
                    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
                    java.util.Set<String> names = java.util.concurrent.ConcurrentHashMap.newKeySet();
                    StockGrpc.StockImplBase stock = new StockGrpc.StockImplBase() {
                        @Override
                        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                            names.add(Thread.currentThread().getName());
                            try {
                                release.await(
                                        30, TimeUnit.SECONDS); // a handler that blocks: why direct-executor is off
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            responses.onNext(CheckReply.newBuilder()
                                    .setSku(request.getSku())
                                    .build());
                            responses.onCompleted();
                        }
                    };
                    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                            .addService(stock);
                    context.getBean(GrpcServerConfigurer.class).accept(builder);
                    Server server = builder.build().start();
                    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                            .usePlaintext()
                            .build();
                    try {
                        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
                        for (int i = 0; i < 50; i++) {
                            calls.add(StockGrpc.newFutureStub(channel)
                                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                                    .check(CheckRequest.newBuilder()
                                            .setSku("s" + i)
                                            .build()));
                        }
                        Awaitility.await()
                                .atMost(Duration.ofSeconds(10))
                                .until(() -> names.stream().anyMatch(name -> !name.startsWith("grpcops-server-")));
                        assertThat(executor.getQueue().size())
                                .as("callbacks waiting for the executor")
                                .isLessThanOrEqualTo(5);
                        release.countDown();
                        for (ListenableFuture<CheckReply> call : calls) {
                            assertThat(call.get(30, TimeUnit.SECONDS).getSku()).startsWith("s");
                        }
                    } finally {
                        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                    }
                });
    }

    /** Holds every Check until released, counting how many are open at once. */
    private static final class HeldStock extends StockGrpc.StockImplBase {

        final AtomicInteger open = new AtomicInteger();
        final AtomicInteger maxOpen = new AtomicInteger();
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
            Thread waiter = new Thread(() -> {
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                open.decrementAndGet();
                responses.onNext(
                        CheckReply.newBuilder().setSku(request.getSku()).build());
                responses.onCompleted();
            });
            waiter.setDaemon(true);
            waiter.start();
        }
    }
}
