package dev.gdsloader.loader.io;

import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moves one batch's bytes from its shards into a slot, as chunks of at most the maximum I/O size run on
 * the loader's I/O pool. Subclasses decide the slot's memory, where each chunk lands, and what happens to a
 * chunk once read (nothing for GDS; a copy for the staged paths).
 *
 * <p>Each slot has a {@link SlotLoad}: its chunk tasks, allocated once, and a completion count, so starting a
 * batch allocates nothing. Thread-safe: chunks of several slots run concurrently on the pool; one slot holds
 * one batch at a time. Owns its open files; {@link #close()} closes them and must follow the end of all I/O.
 */
public abstract class IoEngine implements AutoCloseable {
    /** The dataset read. */
    protected final Dataset dataset;
    /** Largest single read, bytes (a multiple of 4 KiB). */
    protected final long maxIo;
    private final AtomicLong ioNanos = new AtomicLong();
    private SlotLoad[] loads = new SlotLoad[0];

    /**
     * @param dataset the dataset
     * @param maxIo largest single read in bytes, a multiple of 4 KiB
     */
    protected IoEngine(Dataset dataset, long maxIo) {
        this.dataset = dataset;
        this.maxIo = maxIo;
    }

    /** @return the path this engine's batches take */
    public abstract PathTaken pathTaken();

    /**
     * Allocates a slot for this path with its chunk tasks.
     *
     * @param index ring position
     * @param layout region sizes
     * @param maxPieces for each column, the most pieces one batch can need
     * @param allocator the allocator the slot's memory is charged to
     * @return the slot, owned by the caller
     * @throws IOException if a registration fails
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's budget refuses the slot's memory
     */
    public final synchronized Slot newSlot(int index, SlotLayout layout, int[] maxPieces,
                                           dev.gdsloader.memory.NativeAllocator allocator) throws IOException {
        Slot s = allocateSlot(index, layout, allocator);
        if (loads.length <= index) {
            loads = Arrays.copyOf(loads, index + 1);
        }
        loads[index] = new SlotLoad(s, maxChunks(layout, maxPieces));
        return s;
    }

    /**
     * @param layout region sizes
     * @param maxPieces for each column, the most pieces one batch can need
     * @return the most chunks one batch can split into: per column, every piece's aligned cover in
     *     {@code maxIo} pieces, plus one partial chunk at each end of a piece
     */
    public int maxChunks(SlotLayout layout, int[] maxPieces) {
        long n = 0;
        for (int c = 0; c < maxPieces.length; c++) {
            long region = Math.max(regionBytes(layout.stagingOffsets(), layout.stagingBytes(), c),
                    regionBytes(layout.targetOffsets(), layout.targetBytes(), c));
            n += region / maxIo + 2L * maxPieces[c] + 2;
        }
        return Math.toIntExact(n);
    }

    private static long regionBytes(long[] offsets, long total, int c) {
        return (c + 1 < offsets.length ? offsets[c + 1] : total) - offsets[c];
    }

    /**
     * Allocates the memory of a slot.
     *
     * @param index ring position
     * @param layout region sizes
     * @param allocator the allocator its memory is charged to ({@code Slot.assemble}'s)
     * @return the slot
     * @throws IOException if a registration fails
     */
    protected abstract Slot allocateSlot(int index, SlotLayout layout, dev.gdsloader.memory.NativeAllocator allocator)
            throws IOException;

    /**
     * @param slot the slot
     * @param column a column's pieces
     * @return byte offset of the column view within the slot's target memory
     */
    public abstract long viewOffset(Slot slot, ColumnPieces column);

    /**
     * Adds the chunk reads of one column of a batch, through {@link SlotLoad#add}.
     *
     * @param slot the slot the batch lands in
     * @param column the column's pieces
     * @param out the slot's load
     */
    protected abstract void chunks(Slot slot, ColumnPieces column, SlotLoad out);

    /**
     * Reads one chunk, and for staged paths issues its copy. Runs on an I/O pool thread.
     *
     * @param slot the slot the batch lands in
     * @param task the chunk
     * @return bytes read from storage
     * @throws IOException naming shard, offset and length
     */
    protected abstract long run(Slot slot, ChunkTask task) throws IOException;

    /**
     * Called once all chunks of a batch are done: records the ready event where there is one.
     *
     * @param slot the slot the batch landed in
     */
    protected abstract void finish(Slot slot);

    /**
     * @return nanoseconds spent in chunk reads (and, on staged paths, issuing their copies), summed over the
     *     I/O threads since the engine was made
     */
    public long ioNanos() {
        return ioNanos.get();
    }

    /**
     * Starts loading the batch planned in {@code plan} into {@code slot}: its chunks go to {@code pool}.
     *
     * @param plan the slot's plan, filled for this batch
     * @param slot a reusable slot made by this engine
     * @param pool the I/O pool (its queue must hold every chunk of every slot)
     */
    public void start(SlotPlan plan, Slot slot, Executor pool) {
        SlotLoad l = loads[slot.index()];
        l.reset();
        l.inFlight = true;
        for (int c = 0; c < plan.columnCount(); c++) {
            chunks(slot, plan.column(c), l);
        }
        l.pending.set(l.count);
        if (l.count == 0) {
            l.complete();
            return;
        }
        for (int i = 0; i < l.count; i++) {
            pool.execute(l.tasks[i]);
        }
    }

    /**
     * Waits for the batch started in {@code slot}.
     *
     * @param slot the slot
     * @param timeoutNanos how long to wait
     * @return bytes read from storage
     * @throws IOException the first I/O error of the batch (naming shard, offset and length)
     * @throws TimeoutException if the reads did not finish in time (they are still running)
     * @throws InterruptedException if the waiting thread was interrupted
     */
    public long await(Slot slot, long timeoutNanos) throws IOException, TimeoutException, InterruptedException {
        SlotLoad l = loads[slot.index()];
        if (!l.done.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS)) {
            throw new TimeoutException();
        }
        Throwable e = l.error;
        if (e instanceof IOException io) {
            throw io;
        }
        if (e instanceof RuntimeException re) {
            throw re;
        }
        if (e instanceof Error err) {
            throw err;
        }
        return l.bytes.get();
    }

    /**
     * Waits until no chunk of any slot is running or queued, so that no read lands in memory about to be freed.
     *
     * @param deadlineNanos {@link System#nanoTime()} to give up at
     * @return true if all I/O stopped in time
     */
    public boolean quiesce(long deadlineNanos) {
        for (SlotLoad l : loads) {
            // in flight until complete() has finished: pending reaches 0 before the ready event is recorded
            while (l != null && l.inFlight) {
                if (System.nanoTime() > deadlineNanos) {
                    return false;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public abstract void close();

    /** The reusable load state of one slot: its chunk tasks and the count of those still running. */
    protected final class SlotLoad {
        private final Slot slot;
        private final ChunkTask[] tasks;
        private final AtomicInteger pending = new AtomicInteger();
        private final AtomicLong bytes = new AtomicLong();
        private final Semaphore done = new Semaphore(0);
        private volatile Throwable error;
        private volatile boolean inFlight;
        private int count;

        SlotLoad(Slot slot, int capacity) {
            this.slot = slot;
            this.tasks = new ChunkTask[capacity];
            for (int i = 0; i < capacity; i++) {
                tasks[i] = new ChunkTask(this);
            }
        }

        private void reset() {
            count = 0;
            error = null;
            bytes.set(0);
            done.drainPermits();
        }

        /**
         * Adds a chunk to the batch being planned.
         *
         * @param column column index
         * @param shard shard index
         * @param fileOffset first file byte to read
         * @param length bytes to read
         * @param target where the read lands (staging offset, or device offset for GDS)
         * @param copyFrom first file byte to copy on (staged paths)
         * @param copyTo one past the last file byte to copy on
         * @param viewTarget target offset of byte {@code copyFrom}
         */
        void add(int column, int shard, long fileOffset, long length, long target, long copyFrom, long copyTo, long viewTarget) {
            if (count == tasks.length) {
                throw new IllegalStateException("slot " + slot.index() + ": a batch needs more than " + tasks.length + " chunks");
            }
            ChunkTask t = tasks[count++];
            t.column = column;
            t.shard = shard;
            t.fileOffset = fileOffset;
            t.length = length;
            t.target = target;
            t.copyFrom = copyFrom;
            t.copyTo = copyTo;
            t.viewTarget = viewTarget;
        }

        void execute(ChunkTask t) {
            try {
                if (error == null) {
                    long t0 = System.nanoTime();
                    bytes.addAndGet(run(slot, t));
                    ioNanos.addAndGet(System.nanoTime() - t0);
                }
            } catch (Throwable e) {
                synchronized (this) {
                    if (error == null) {
                        error = e;
                    }
                }
            } finally {
                if (pending.decrementAndGet() == 0) {
                    complete();
                }
            }
        }

        private void complete() {
            try {
                if (error == null) {
                    finish(slot);
                }
            } catch (RuntimeException e) {
                error = e;
            } finally {
                done.release();
                inFlight = false;
            }
        }
    }
}
