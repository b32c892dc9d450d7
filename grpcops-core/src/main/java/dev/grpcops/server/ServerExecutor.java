package dev.grpcops.server;

import dev.grpcops.internal.RateLimitedLog;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;

/**
 * A bounded executor for a server's handlers: {@code threads} threads (idle ones end after a
 * minute) and at most {@code queue} callbacks waiting for them. Beyond that a callback runs on the
 * transport thread that brought it, as with a direct executor, which holds back that thread's reads
 * until the executor catches up: a burst of thousands of calls becomes neither thousands of threads
 * nor an unbounded queue, and nothing is dropped. Each time that happens is counted into a WARN
 * line at most once per {@code logInterval}.
 *
 * <pre>{@code
 * ServerExecutor handlers = new ServerExecutor(64, 1024, Duration.ofSeconds(10));
 * Server server = ServerBuilder.forPort(50061).executor(handlers.executor())...build();
 * ...
 * handlers.close(); // once the server has terminated
 * }</pre>
 *
 * <p>Not an {@link java.util.concurrent.Executor} itself, so that a Spring bean of this type does
 * not take the place of an application's own task executor.
 */
public final class ServerExecutor implements AutoCloseable {

    private final ThreadPoolExecutor executor;

    public ServerExecutor(int threads, int queue, Duration logInterval) {
        if (threads < 1 || queue < 1) {
            throw new IllegalArgumentException(
                    "a server executor needs at least one thread and room for one callback, was " + threads
                            + " threads and a queue of " + queue);
        }
        AtomicInteger count = new AtomicInteger();
        RateLimitedLog overflow = new RateLimitedLog(LoggerFactory.getLogger(ServerExecutor.class), logInterval);
        executor = new ThreadPoolExecutor(
                threads,
                threads,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queue),
                task -> {
                    Thread thread = new Thread(task, "grpcops-server-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                },
                (task, pool) -> {
                    if (pool.isShutdown()) {
                        throw new RejectedExecutionException("the gRPC server's executor has shut down");
                    }
                    overflow.warn("grpc server executor: " + queue + " callbacks already wait for its " + threads
                            + " threads (more threads, or a longer queue, if this persists); running one on the transport's"
                            + " thread, which holds back its reads until the executor catches up");
                    task.run();
                });
        executor.allowCoreThreadTimeOut(true);
    }

    /** The executor itself: for the server, and for admission's queued calls. */
    public ThreadPoolExecutor executor() {
        return executor;
    }

    /** Takes no new callbacks; those waiting still run. */
    @Override
    public void close() {
        executor.shutdown();
    }
}
