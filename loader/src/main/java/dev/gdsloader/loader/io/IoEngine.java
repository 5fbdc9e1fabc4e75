package dev.gdsloader.loader.io;

import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ColumnPlan;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moves one batch's bytes from its shards into a slot, as chunks of at most the maximum I/O size run on
 * the loader's I/O pool. Subclasses decide the slot's memory, where each chunk lands, and what happens
 * to a chunk once read (nothing for GDS; a copy for the staged paths).
 *
 * <p>Thread-safe: chunks of several batches run concurrently on the pool. Owns its open files;
 * {@link #close()} closes them and must follow the end of all I/O.
 */
public abstract class IoEngine implements AutoCloseable {
    /** The dataset read. */
    protected final Dataset dataset;
    /** Largest single read, bytes (a multiple of 4 KiB). */
    protected final long maxIo;
    private final AtomicLong ioNanos = new AtomicLong();

    /**
     * @param dataset the dataset
     * @param maxIo largest single read in bytes, a multiple of 4 KiB
     */
    protected IoEngine(Dataset dataset, long maxIo) {
        this.dataset = dataset;
        this.maxIo = maxIo;
    }

    /**
     * @return nanoseconds spent in chunk reads (and, on staged paths, issuing their copies), summed over the
     *     I/O threads since the engine was made
     */
    public long ioNanos() {
        return ioNanos.get();
    }

    /** @return the path this engine's batches take */
    public abstract PathTaken pathTaken();

    /**
     * Allocates a slot for this path.
     *
     * @param index ring position
     * @param layout region sizes
     * @return the slot, owned by the caller
     * @throws IOException if a registration fails
     */
    public abstract Slot newSlot(int index, SlotLayout layout) throws IOException;

    /**
     * @param slot the slot
     * @param plan a column's plan
     * @return byte offset of the column view within the slot's target memory
     */
    public abstract long viewOffset(Slot slot, ColumnPlan plan);

    /**
     * Adds the chunk reads of one column of a batch.
     *
     * @param slot the slot the batch lands in
     * @param plan the column's plan
     * @param out receives the chunk reads
     */
    protected abstract void chunks(Slot slot, ColumnPlan plan, List<ChunkRead> out);

    /**
     * Reads one chunk, and for staged paths issues its copy. Runs on an I/O pool thread.
     *
     * @param slot the slot the batch lands in
     * @param read the chunk
     * @return bytes read from storage
     * @throws IOException naming shard, offset and length
     */
    protected abstract long run(Slot slot, ChunkRead read) throws IOException;

    /**
     * Called once all chunks of a batch are done: records the ready event where there is one.
     *
     * @param slot the slot the batch landed in
     */
    protected abstract void finish(Slot slot);

    /**
     * Starts loading {@code plan} into {@code slot}.
     *
     * @param plan the batch
     * @param slot a reusable slot
     * @param pool the I/O pool
     * @return completes with the bytes read from storage once every chunk is read (and, for the bounce
     *     path, every copy enqueued and the ready event recorded); completes exceptionally with the first
     *     I/O error, which names shard, offset and length
     */
    public CompletableFuture<Long> load(BatchPlan plan, Slot slot, Executor pool) {
        List<ChunkRead> reads = new ArrayList<>();
        for (ColumnPlan c : plan.columns()) {
            chunks(slot, c, reads);
        }
        AtomicLong total = new AtomicLong();
        CompletableFuture<?>[] fs = new CompletableFuture<?>[reads.size()];
        for (int i = 0; i < fs.length; i++) {
            ChunkRead r = reads.get(i);
            fs[i] = CompletableFuture.runAsync(() -> {
                try {
                    long t0 = System.nanoTime();
                    total.addAndGet(run(slot, r));
                    ioNanos.addAndGet(System.nanoTime() - t0);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, pool);
        }
        return CompletableFuture.allOf(fs).thenApply(v -> {
            finish(slot);
            return total.get();
        });
    }

    /**
     * Unwraps the failure of a {@link #load} future into the I/O error it carries.
     *
     * @param t what the future failed with
     * @return the underlying exception
     */
    public static Throwable cause(Throwable t) {
        while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException
                || t instanceof UncheckedIOException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Override
    public abstract void close();
}
