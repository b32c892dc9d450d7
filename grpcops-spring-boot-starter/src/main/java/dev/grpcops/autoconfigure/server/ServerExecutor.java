package dev.grpcops.autoconfigure.server;

import dev.grpcops.guard.RateLimitedLog;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;

/**
 * The executor handlers run on when direct-executor is off: {@code grpcops.server.executor-threads}
 * threads (idle ones end after a minute) and at most {@code grpcops.server.executor-queue} callbacks
 * waiting for them. Beyond that a callback runs on the transport thread that brought it, as with
 * direct-executor, which holds back that thread's reads until the executor catches up: a burst of
 * thousands of calls becomes neither thousands of threads nor an unbounded queue, and nothing is
 * dropped. Deliberately not an {@code Executor} bean, which would switch off Spring Boot's own
 * {@code applicationTaskExecutor}.
 */
public final class ServerExecutor implements DisposableBean {

    private final ThreadPoolExecutor executor;

    ServerExecutor(int threads, int queueCapacity, Duration logInterval) {
        AtomicInteger count = new AtomicInteger();
        RateLimitedLog overflow = new RateLimitedLog(LoggerFactory.getLogger(ServerExecutor.class), logInterval);
        executor = new ThreadPoolExecutor(
                threads,
                threads,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queueCapacity),
                task -> {
                    Thread thread = new Thread(task, "grpcops-server-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                },
                (task, pool) -> {
                    if (pool.isShutdown()) {
                        throw new RejectedExecutionException("the gRPC server's executor has shut down");
                    }
                    overflow.warn(
                            "grpc server executor: " + queueCapacity + " callbacks already wait for its " + threads
                                    + " threads (grpcops.server.executor-queue / executor-threads); running one on the transport's"
                                    + " thread, which holds back its reads until the executor catches up");
                    task.run();
                });
        executor.allowCoreThreadTimeOut(true);
    }

    /** The executor itself: for the server, and for admission's queued calls. */
    public ThreadPoolExecutor executor() {
        return executor;
    }

    @Override
    public void destroy() {
        executor.shutdown();
    }
}
