package dev.gdsloader.loader.spi;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;

/**
 * One way of moving a batch's bytes from its shards into a slot. An engine owns the kind of slot memory it reads
 * into ({@link #allocateSlot}: its own {@link SlotMemory} class {@code S}, allocated in one place) and says how a
 * batch's pieces move ({@link #newLoad}: its own {@link SlotLoad.Work}, the operations of one batch, over the slot
 * it allocated, typed: no engine casts its slot); the scheduling of those operations on the I/O pool is
 * {@link SlotLoad}'s, shared by every engine.
 *
 * <p>Adding an engine is one class plus one line: the class implements this and, as a nested or separate public
 * class with a public no-argument constructor, an {@link EngineProvider} (the path it serves, its preference under
 * {@code AUTO}, whether it can serve a dataset here, how it opens); the line names that provider class in
 * {@code META-INF/services/dev.gdsloader.loader.spi.EngineProvider} on the class path ({@link java.util.ServiceLoader}).
 * Nothing else in the loader names engines.
 *
 * <p>Implementations are thread-safe: operations of several slots run concurrently on the pool. An engine owns its
 * open files; {@link #close()} closes them and must follow the end of all I/O (the slots are closed by the ring).
 *
 * @param <S> the engine's own slot memory class
 */
public interface IoEngine<S extends SlotMemory> extends AutoCloseable {
    /** @return the path this engine's batches report they took ({@code Batch.path()}, {@code LoaderStats.path()}) */
    PathTaken pathTaken();

    /**
     * Allocates one slot's memory for this engine.
     *
     * @param index ring position, for messages
     * @param layout region sizes
     * @param allocator the allocator every byte of the slot (device, pinned, host, registrations) is charged to
     * @return the slot memory, owned by the caller
     * @throws IOException if a registration fails
     * @throws dev.gdsloader.cuda.PinnedAllocationException if the host refuses to pin the slot's host memory (the
     *     ring then runs with the slots it has, from two on)
     * @throws dev.gdsloader.cuda.CudaException if device memory cannot be allocated
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's budget refuses the slot's memory
     */
    S allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) throws IOException;

    /**
     * Makes the load state of one ring entry: this engine's description of the batches that land in
     * {@code slot}, scheduled by a {@link SlotLoad}. Allocates everything a batch needs, once.
     *
     * @param index ring position, for messages
     * @param slot memory made by this engine's {@link #allocateSlot}
     * @param layout its region sizes
     * @param maxPieces for each column, the most pieces one batch can need
     * @return the entry's load, owned with the entry
     */
    SlotLoad newLoad(int index, S slot, SlotLayout layout, int[] maxPieces);

    /**
     * @param layout region sizes
     * @param maxPieces for each column, the most pieces one batch can need
     * @return the most operations one batch can need (each a pool task at most), for sizing the pool's queue
     */
    int maxOps(SlotLayout layout, int[] maxPieces);

    /**
     * @param layout the slot's region sizes
     * @param column a column's pieces, planned for the batch in the slot
     * @return byte offset of the column view within the slot's target memory
     */
    long viewOffset(SlotLayout layout, ColumnPieces column);

    /**
     * @param layout region sizes
     * @return bytes of host memory (pinned or plain) one slot of this engine holds, for the loader's host-memory
     *     check
     */
    long hostBytesPerSlot(SlotLayout layout);

    /**
     * @return nanoseconds spent running operations (reads, and issuing copies), summed over the I/O threads
     *     since the engine was made
     */
    long ioNanos();

    /**
     * @return GPU nanoseconds the engine's transfers of the batches counted by {@link #deviceBatches()} took, summed
     *     (timed CUDA events around each batch's work on its stream: MAPPED); 0 by default, where an engine does not time them
     */
    default long deviceNanos() {
        return 0;
    }

    /** @return batches whose GPU time {@link #deviceNanos()} holds; 0 by default */
    default long deviceBatches() {
        return 0;
    }

    /** @return wall nanoseconds the engine's open spent registering shard files (MAPPED); 0 by default */
    default long registrationNanos() {
        return 0;
    }

    /**
     * Called at each epoch's start, before its first batch: an engine that depends on the shards staying as they were
     * (MAPPED's registered mappings) checks them here. Does nothing by default.
     *
     * @throws IOException naming a shard that changed and how
     */
    default void checkEpoch() throws IOException {
    }

    /** Closes the engine's open files, once; call after all I/O has stopped. */
    @Override
    void close();

    /**
     * The most operations a staged or direct read of one batch can split into: per column, every piece's aligned
     * cover in {@code maxIo} pieces, plus one partial read at each end of a piece.
     *
     * @param layout region sizes
     * @param maxPieces for each column, the most pieces one batch can need
     * @param maxIo largest single read, bytes
     * @return the bound
     */
    static int maxReads(SlotLayout layout, int[] maxPieces, long maxIo) {
        long n = 0;
        for (int c = 0; c < maxPieces.length; c++) {
            long region = Math.max(layout.stagingRegion(c), layout.targetRegion(c));
            n += region / maxIo + 2L * maxPieces[c] + 2;
        }
        return Math.toIntExact(n);
    }
}
