package dev.gdsloader.loader.io;

import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.posix.MappedFaults;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How the staged engines (bounce, host) move a batch's pieces, composed into each: {@code pread} from the shard
 * (or the host-decoded bytes, see {@link ShardReader}) through host memory.
 *
 * <p>Per piece, by the file's descriptor and the column's destination:
 * <ul>
 * <li>buffered (or decoded) and a host-addressable destination (the host path's view; the bounce path's packed
 *     image of a small-record column): the piece's exact bytes are read straight to their place, no copy;</li>
 * <li>buffered and a device destination (the bounce path's large records): exact bytes into staging, then one
 *     {@link CopyStep} per read;</li>
 * <li>{@code O_DIRECT}: the piece's 4 KiB-aligned cover into staging, then its useful bytes copied on (a host
 *     copy, or the {@link CopyStep}).</li>
 * </ul>
 * Reads are cut at {@code maxIo}; consecutive reads are grouped into pool tasks by {@link SlotLoad}. Packed
 * columns go to the target in one copy each when the batch's reads are done.
 *
 * <p>The MAPPED path composes it for its host-decoded shards only ({@code only}): their pieces are decoded into the
 * slot's pinned staging and copied into the view by the slot's {@link CopyStep}, beside the GPU's own copies and
 * gathers of the mapped shards. Thread-safe; owns the open files (opened on first read, so shards it never reads
 * are never opened).
 */
final class StagedReads implements AutoCloseable {
    private static final byte EXACT_TO_HOST = 0;
    private static final byte STAGE_TO_HOST = 1;
    private static final byte STAGE_TO_STEP = 2;

    private final Dataset dataset;
    private final long maxIo;
    /** Whether shards are opened with {@code O_DIRECT}; without it every reader is exact. */
    private final boolean direct;
    private final OpenFiles<ShardReader> files;
    private final AtomicLong ioNanos = new AtomicLong();
    /** Per column and shard: whether its pieces are read here; null where every shard's are. */
    private final boolean[][] only;

    StagedReads(Dataset dataset, EngineConfig config) {
        this(dataset, config, null);
    }

    /**
     * @param dataset the dataset
     * @param config the settings (largest read, {@code O_DIRECT})
     * @param only per column and shard, true where that shard's pieces are read by this object; null for every
     *     shard (the staged engines). Pieces of other shards are left out of the plan, to another route.
     */
    StagedReads(Dataset dataset, EngineConfig config, boolean[][] only) {
        this.dataset = dataset;
        this.maxIo = config.maxIo();
        this.direct = config.direct();
        // host-decoded shards are charged to the loader's budget while they decode; other files open as ShardReader does
        this.files = new OpenFiles<>(dataset, shard -> shard instanceof HostDecodedRecords d
                ? new DecodedShardReader(d, config.hostBudget()) : ShardReader.open(shard, config.direct(), config.files()),
                config.openFiles());
        this.only = only;
    }

    /** @return nanoseconds spent in operations, summed over threads */
    long ioNanos() {
        return ioNanos.get();
    }

    /** @return largest single read, bytes */
    long maxIo() {
        return maxIo;
    }

    /** @return the dataset read */
    Dataset dataset() {
        return dataset;
    }

    /**
     * Makes one entry's load.
     *
     * @param index ring position
     * @param slot the entry's memory
     * @param layout its regions
     * @param maxPieces most pieces per column and batch
     * @param packedAt per column: offset of its packed image in {@code slot.packed()}, or -1 where it has none
     * @param intoTarget true if columns without a packed image land in {@code slot.hostTarget()} directly (the
     *     host path); false if they go through {@code slot.copy()} (the bounce path, also where host memory
     *     stands in for the device)
     * @return the load
     */
    SlotLoad newLoad(int index, StagedMemory slot, SlotLayout layout, int[] maxPieces, long[] packedAt,
                     boolean intoTarget) {
        int capacity = IoEngine.maxReads(layout, maxPieces, maxIo);
        return new SlotLoad("slot " + index, capacity, work(slot, layout, packedAt, intoTarget, capacity), ioNanos);
    }

    /**
     * One entry's operations, to run in a {@link SlotLoad} of the caller's (the MAPPED path adds its own operation
     * before them). Its operation indices are those {@link SlotLoad#add} returns, so they may start past 0.
     *
     * @param slot the entry's memory
     * @param layout its regions
     * @param packedAt as in {@link #newLoad}
     * @param intoTarget as in {@link #newLoad}
     * @param capacity one past the largest operation index the load can give (its {@code maxOps})
     * @return the work; its {@link SlotLoad.Work#finish()} copies the packed images, then the step's finish
     */
    SlotLoad.Work work(StagedMemory slot, SlotLayout layout, long[] packedAt, boolean intoTarget, int capacity) {
        return new Ops(slot, layout, packedAt, intoTarget, capacity);
    }

    @Override
    public void close() {
        files.close();
    }

    /** One entry's operations, in arrays sized once and refilled for every batch. */
    private final class Ops implements SlotLoad.Work {
        private final StagedMemory slot;
        private final SlotLayout layout;
        private final MemorySegment staging;
        private final CopyStep step;
        /** Per column: host memory its pieces land in directly, or null where they go through the copy step. */
        private final MemorySegment[] hostDest;
        /** Per column: offset in {@code hostDest} (or, for the step, in the target) of the view's byte 0. */
        private final long[] destBase;
        private final long[] packedAt;
        private final long[] packedBytes;
        private final int[] column;
        private final int[] shard;
        private final byte[] kind;
        private final long[] fileOffset;
        private final long[] length;
        private final long[] readAt;
        private final long[] useFrom;
        private final long[] useTo;
        private final long[] copyTo;

        Ops(StagedMemory slot, SlotLayout layout, long[] packedAt, boolean intoTarget, int capacity) {
            this.slot = slot;
            this.layout = layout;
            this.staging = slot.staging();
            this.step = slot.copy();
            int n = layout.targetOffsets().length;
            this.hostDest = new MemorySegment[n];
            this.destBase = new long[n];
            this.packedAt = packedAt.clone();
            this.packedBytes = new long[n];
            for (int c = 0; c < n; c++) {
                if (packedAt[c] >= 0) {
                    hostDest[c] = slot.packed();
                    destBase[c] = packedAt[c];
                } else {
                    hostDest[c] = intoTarget ? java.util.Objects.requireNonNull(slot.hostTarget(), "host target") : null;
                    destBase[c] = layout.targetOffsets()[c];
                }
            }
            this.column = new int[capacity];
            this.shard = new int[capacity];
            this.kind = new byte[capacity];
            this.fileOffset = new long[capacity];
            this.length = new long[capacity];
            this.readAt = new long[capacity];
            this.useFrom = new long[capacity];
            this.useTo = new long[capacity];
            this.copyTo = new long[capacity];
        }

        @Override
        public void plan(SlotPlan plan, SlotLoad load) {
            for (int c = 0; c < plan.columnCount(); c++) {
                ColumnPieces col = plan.column(c);
                packedBytes[c] = col.bytes();
                long stagingAt = layout.stagingOffsets()[c];
                for (int i = 0; i < col.count(); i++) {
                    if (only != null && !only[c][col.shard(i)]) {
                        continue;
                    }
                    long pieceStart = col.start(i);
                    long pieceEnd = col.end(i);
                    long dest = destBase[c] + col.view(i);
                    if (exact(c, col.shard(i))) {
                        boolean direct = hostDest[c] != null;
                        for (long off = pieceStart; off < pieceEnd; ) {
                            long stop = Math.min(pieceEnd, off + maxIo);
                            long to = dest + (off - pieceStart);
                            add(load, c, col.shard(i), direct ? EXACT_TO_HOST : STAGE_TO_STEP, off, stop - off,
                                    direct ? to : stagingAt + (off - pieceStart), off, stop, to);
                            off = stop;
                        }
                        if (!direct) {
                            stagingAt += pieceEnd - pieceStart;
                        }
                    } else {
                        long start = Alignment.down(pieceStart);
                        long end = Alignment.up(pieceEnd);
                        byte k = hostDest[c] != null ? STAGE_TO_HOST : STAGE_TO_STEP;
                        for (long off = start; off < end; ) {
                            long stop = Math.min(end, Alignment.down(off) + maxIo);
                            long from = Math.max(off, pieceStart);
                            add(load, c, col.shard(i), k, off, stop - off, stagingAt + (off - start), from,
                                    Math.min(stop, pieceEnd), dest + (from - pieceStart));
                            off = stop;
                        }
                        stagingAt += end - start;
                    }
                }
            }
        }

        /**
         * Whether shard reads of (column, shard) can be exact: always without {@code O_DIRECT} (buffered and decoded
         * readers are; the file is not opened for the plan, so a prefetch ring over more shards than the open-file
         * cache holds does not open each twice); with it the file is opened now (on the reader thread) to ask; where
         * that fails the piece is planned as an aligned cover, which suits any descriptor, and the read reports the
         * failure, naming the file.
         */
        private boolean exact(int c, int s) {
            if (!direct) {
                return true;
            }
            try {
                boolean exact = files.acquire(c, s).exact();
                files.release(c, s);
                return exact;
            } catch (IOException e) {
                return false;
            }
        }

        private void add(SlotLoad load, int c, int s, byte k, long off, long len, long at, long from, long to, long dst) {
            int i = load.add(len);
            column[i] = c;
            shard[i] = s;
            kind[i] = k;
            fileOffset[i] = off;
            length[i] = len;
            readAt[i] = at;
            useFrom[i] = from;
            useTo[i] = to;
            copyTo[i] = dst;
        }

        @Override
        public long run(int from, int to) throws IOException {
            try {
                long total = read(from, to);
                MappedFaults.settle(); // a fault of a mapped copy above is raised here at the latest, inside this try
                return total;
            } catch (InternalError e) {
                throw cut(from, to, e);
            }
        }

        /**
         * @return the error naming the first file of pieces {@code [from, to)} that is now shorter than a piece needs
         * @throws InternalError {@code e} itself, if no file was cut (it did not come from a mapped copy)
         */
        private IOException cut(int from, int to, InternalError e) throws IOException {
            for (int i = from; i < to; i++) {
                ShardReader f = files.acquire(column[i], shard[i]);
                try {
                    long size = f.sizeNow();
                    if (size < useTo[i]) {
                        return new IOException(f.path() + ": cut to " + size + " bytes while it was read: " + length[i]
                                + " bytes at offset " + fileOffset[i] + " are gone (file truncated while loading?)");
                    }
                } finally {
                    files.release(column[i], shard[i]);
                }
            }
            throw e;
        }

        private long read(int from, int to) throws IOException {
            long total = 0;
            for (int i = from; i < to; i++) {
                int c = column[i];
                byte k = kind[i];
                long n;
                ShardReader f = files.acquire(c, shard[i]);
                try {
                    n = f.read(k == EXACT_TO_HOST ? hostDest[c] : staging, readAt[i], length[i], fileOffset[i]);
                } finally {
                    files.release(c, shard[i]);
                }
                long needed = useTo[i] - fileOffset[i];
                if (n < needed) {
                    throw new IOException(f.path() + ": short read: " + n + " bytes at offset " + fileOffset[i]
                            + " where " + needed + " were expected (file truncated while loading?)");
                }
                long useful = useTo[i] - useFrom[i];
                if (k != EXACT_TO_HOST && useful > 0) {
                    long src = readAt[i] + (useFrom[i] - fileOffset[i]);
                    if (k == STAGE_TO_HOST) {
                        MemorySegment.copy(staging, src, hostDest[c], copyTo[i], useful);
                    } else {
                        step.copy(staging, src, copyTo[i], useful);
                    }
                }
                total += n;
            }
            return total;
        }

        @Override
        public void finish() {
            for (int c = 0; c < packedAt.length; c++) {
                if (packedAt[c] >= 0 && packedBytes[c] > 0) {
                    step.copy(slot.packed(), packedAt[c], layout.targetOffsets()[c], packedBytes[c]);
                }
            }
            step.finish();
        }
    }
}
