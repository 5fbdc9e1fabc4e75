package dev.gdsloader.service.server;

import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a session may take of its server, whatever its request asks for (service/README.md, "Limits"): its reads run on
 * the server's one I/O pool of {@link ServerLimits#ioThreads()} threads (named {@value #THREAD_PREFIX}N, started when
 * first needed, ended after {@value #IDLE_SECONDS} s without work), so the server's thread count is bounded by its own
 * settings; a request's {@code ioThreads} is clamped to the pool's size (it starts no thread); a {@code prefetchDepth}
 * above {@link ServerLimits#maxPrefetchDepth()}, or a batch above {@link ServerLimits#maxBatchBytes()} (batch size,
 * at most the dataset's records, times the bytes of one record of the columns asked for), is refused
 * {@link IllegalArgumentException} (INVALID_ARGUMENT to the client) naming the request's value and the ceiling.
 *
 * <p>Ownership: owns the pool; the server calls {@link #close()} after every session's loader is closed. Thread-safe.
 */
final class SessionCeilings implements AutoCloseable {
    /** Name prefix of the pool's threads. */
    static final String THREAD_PREFIX = "gdsloader-server-io-";
    /** How long a pool thread waits for work before it ends, seconds. */
    static final long IDLE_SECONDS = 30;

    private final ServerLimits limits;
    private final ThreadPoolExecutor pool;

    /**
     * @param limits the server's limits
     * @param threads makes the pool's threads (null: daemon platform threads named {@value #THREAD_PREFIX}N); a test's
     *     may fail, as the JVM's does when the OS gives no more threads
     */
    SessionCeilings(ServerLimits limits, ThreadFactory threads) {
        this.limits = limits;
        AtomicInteger n = new AtomicInteger();
        ThreadFactory f = threads != null ? threads
                : r -> Thread.ofPlatform().daemon().name(THREAD_PREFIX + n.getAndIncrement()).unstarted(r);
        // an unbounded queue: a loader's tasks are never refused while the server runs (GdsLoader.Builder.ioExecutor)
        this.pool = new ThreadPoolExecutor(limits.ioThreads(), limits.ioThreads(), IDLE_SECONDS, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), f);
        pool.allowCoreThreadTimeOut(true);
    }

    /** @return the server's I/O pool, for every session's loader ({@code GdsLoader.Builder.ioExecutor}) */
    Executor io() {
        return pool;
    }

    /**
     * @param o a request's options
     * @param ds the dataset opened for it
     * @param dataset the dataset's name in the request, for messages
     * @return {@code o} with {@code ioThreads} clamped to the pool's size
     * @throws IllegalArgumentException naming the ceiling, if the prefetch depth or the batch's bytes are above it
     */
    LoaderOptions apply(LoaderOptions o, Dataset ds, String dataset) {
        if (o.prefetchDepth() > limits.maxPrefetchDepth()) {
            throw new IllegalArgumentException("option prefetchDepth " + o.prefetchDepth() + " is above this server's ceiling of "
                    + limits.maxPrefetchDepth() + " slots (ServerLimits.maxPrefetchDepth, serve --max-prefetch-depth)");
        }
        long recordBytes = 0;
        for (Column c : (o.columns().isEmpty() ? ds : ds.select(o.columns())).columns()) {
            recordBytes += c.recordBytes();
        }
        long records = Math.min(o.batchSize(), Math.max(1, ds.recordCount()));
        long batchBytes = Math.multiplyHigh(records, recordBytes) != 0 ? Long.MAX_VALUE : records * recordBytes;
        if (batchBytes < 0 || batchBytes > limits.maxBatchBytes()) {
            throw new IllegalArgumentException("a batch of " + records + " records of dataset '" + dataset + "' is "
                    + (batchBytes < 0 || batchBytes == Long.MAX_VALUE ? "more than " + Long.MAX_VALUE : Long.toString(batchBytes))
                    + " bytes, above this server's ceiling of " + limits.maxBatchBytes()
                    + " bytes (ServerLimits.maxBatchBytes, serve --max-batch-bytes): ask for a smaller batch size or fewer columns");
        }
        return o.ioThreads() > limits.ioThreads() ? o.withIoThreads(limits.ioThreads()) : o;
    }

    /** @return threads of the pool alive now */
    int poolThreads() {
        return pool.getPoolSize();
    }

    /** Stops the pool (its tasks are done: every loader was closed first); does not wait. */
    @Override
    public void close() {
        pool.shutdown();
    }
}
