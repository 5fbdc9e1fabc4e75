package dev.gdsloader.loader;

import dev.gdsloader.cuda.PinnedAllocationException;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotMemory;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * The prefetch ring, in one place: prefetch-depth {@link RingEntry entries}, each the slot memory its engine made,
 * the plan, the column views and the load state of one batch.
 *
 * <p>Owned by the loader; {@link #close()} frees every entry's memory once, after all I/O has stopped
 * ({@link #quiesce}). Entries are handed between the reader thread and the consumer by the epoch's free queue and {@link Handover}.
 */
final class PrefetchRing implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PrefetchRing.class.getName());

    private final IoEngine<?> engine;
    private final PathTaken path;
    private final SlotLayout layout;
    private final List<RingEntry> entries;
    private boolean closed;

    private PrefetchRing(IoEngine<?> engine, SlotLayout layout, List<RingEntry> entries) {
        this.engine = engine;
        this.path = engine.pathTaken();
        this.layout = layout;
        this.entries = List.copyOf(entries);
    }

    /**
     * Allocates up to {@code depth} entries. Where the host refuses to pin more memory after two or more entries,
     * the ring runs with the entries it has, and a warning says so; any other failure frees what was made.
     *
     * @param engine the engine that makes each entry's memory and load
     * @param columns the dataset's columns, in order
     * @param layout region sizes of one slot
     * @param maxPieces for each column, the most pieces one batch can need
     * @param depth entries wanted
     * @param allocator the allocator every entry's memory is charged to (the loader's)
     * @return the ring, owned by the caller
     * @throws IOException if a registration fails
     * @throws dev.gdsloader.cuda.CudaException if memory cannot be allocated (a {@link PinnedAllocationException}
     *     for the first or second entry; from the third on, it shrinks the ring instead)
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's budget refuses an entry's memory
     */
    static PrefetchRing allocate(IoEngine<?> engine, List<Column> columns, SlotLayout layout, int[] maxPieces, int depth,
                                 NativeAllocator allocator) throws IOException {
        return new PrefetchRing(engine, layout, entries(engine, columns, layout, maxPieces, depth, allocator));
    }

    /**
     * Makes the entries with the engine's slot type {@code S} captured, so that each slot goes back to the engine that
     * made it as its own type.
     */
    private static <S extends SlotMemory> List<RingEntry> entries(IoEngine<S> engine, List<Column> columns,
                                                                  SlotLayout layout, int[] maxPieces, int depth,
                                                                  NativeAllocator allocator) throws IOException {
        List<RingEntry> made = new ArrayList<>();
        try {
            for (int i = 0; i < depth; i++) {
                S m;
                try {
                    m = engine.allocateSlot(i, layout, allocator);
                } catch (PinnedAllocationException e) {
                    if (made.size() < 2) {
                        throw e;
                    }
                    int have = made.size();
                    LOG.warning(() -> "gdsloader: cudaHostAlloc refused pinned host memory for slot " + have + " ("
                            + layout.stagingBytes() + " bytes): prefetch depth shrinks from " + depth + " to " + have
                            + "; " + e.getMessage());
                    break;
                }
                try {
                    SlotColumn[] views = new SlotColumn[columns.size()];
                    for (int c = 0; c < views.length; c++) {
                        Column col = columns.get(c);
                        views[c] = new SlotColumn(col.name(), col.dtype(), col.recordShape(), m.device(), m.hostTarget());
                    }
                    made.add(new RingEntry(i, m, new SlotPlan(maxPieces), views, engine.newLoad(i, m, layout, maxPieces)));
                } catch (RuntimeException | Error e) {
                    m.close();
                    throw e;
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            for (RingEntry r : made) {
                try {
                    r.memory.close();
                } catch (RuntimeException c) {
                    e.addSuppressed(c);
                }
            }
            throw e;
        }
        return made;
    }

    /** @return the entries, in ring order */
    List<RingEntry> entries() {
        return entries;
    }

    /** @return entries in the ring */
    int size() {
        return entries.size();
    }

    /** @return the path the ring's batches take */
    PathTaken path() {
        return path;
    }

    /** @return the engine filling the ring */
    IoEngine<?> engine() {
        return engine;
    }

    /**
     * Points the entry's views at the batch it now holds (after its reads finished).
     *
     * @param e the entry
     */
    void fillViews(RingEntry e) {
        for (int c = 0; c < e.views.length; c++) {
            ColumnPieces pieces = e.plan.column(c);
            e.views[c].fill(e.plan.records(), pieces.bytes(), engine.viewOffset(layout, pieces));
        }
    }

    /**
     * Waits until no read of any entry is running or queued.
     *
     * @param deadlineNanos {@link System#nanoTime()} to give up at
     * @return true if all I/O stopped in time
     */
    boolean quiesce(long deadlineNanos) {
        for (RingEntry e : entries) {
            if (!e.load.quiesce(deadlineNanos)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Frees every entry's memory, once; call only after all I/O stopped.
     *
     * @throws RuntimeException the first failure to free (the rest is still freed)
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (RingEntry e : entries) {
            try {
                e.memory.close();
            } catch (RuntimeException x) {
                first = first == null ? x : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
