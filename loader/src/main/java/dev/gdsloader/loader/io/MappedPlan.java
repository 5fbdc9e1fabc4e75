package dev.gdsloader.loader.io;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.slot.SlotLayout;

/**
 * How one batch moves on the MAPPED path, planned on the host without touching any mapping: each piece (a run of
 * records of one shard) of at least {@link #COPY_FROM} bytes is one copy by the copy engine from the registered host
 * address into the slot ({@code cudaMemcpyAsync}); every smaller piece becomes gather entries of at most
 * {@link #CHUNK} bytes each ({@code src} device address in the mapping, {@code dst} device address in the slot's
 * column view, {@code length}), the entries of one column consecutive, so that one kernel launch per column moves
 * them all.
 *
 * <p>Sized once per ring entry ({@link #entryCapacity}); {@link #plan} refills it per batch without allocating. One
 * batch at a time (the reader thread plans, a pool thread issues). Not thread-safe.
 */
final class MappedPlan {
    /** Pieces of at least this many bytes go by {@code cudaMemcpyAsync} (1 MiB: copies that size run near the link's peak). */
    static final long COPY_FROM = 1 << 20;
    /** Gather entries cover at most this many bytes (a multiple of 16), so that a long piece is read by many warps. */
    static final long CHUNK = 64 << 10;
    /** Longs per gather entry: src, dst, length. */
    static final int ENTRY_LONGS = 3;

    /** Addresses of the mapped shards. */
    interface Shards {
        /**
         * @param column column index
         * @param shard shard index within the column
         * @param fileOffset byte offset in the shard's file
         * @return the host address of that byte in the registered mapping
         */
        long host(int column, int shard, long fileOffset);

        /** @return as {@link #host}, the device address kernels read that byte at */
        long device(int column, int shard, long fileOffset);
    }

    private final long[] copySrc;
    private final long[] copyDst;
    private final long[] copyLen;
    private final long[] entries;
    private final int[] columnFirst;
    private final int[] columnCount;
    private int copies;
    private int entryCount;

    /**
     * @param columns columns of the dataset
     * @param maxCopies the most copies one batch can need (the pieces of all columns)
     * @param maxEntries the most gather entries one batch can need
     */
    MappedPlan(int columns, int maxCopies, int maxEntries) {
        this.copySrc = new long[maxCopies];
        this.copyDst = new long[maxCopies];
        this.copyLen = new long[maxCopies];
        this.entries = new long[ENTRY_LONGS * maxEntries];
        this.columnFirst = new int[columns];
        this.columnCount = new int[columns];
    }

    /**
     * The most gather entries a batch can need: per column, one per record (pieces hold whole records) plus one per
     * {@link #CHUNK} bytes of its region.
     *
     * @param dataset the dataset
     * @param layout the slot layout of a batch
     * @return the bound
     */
    static int entryCapacity(Dataset dataset, SlotLayout layout) {
        long n = 0;
        for (int c = 0; c < dataset.columns().size(); c++) {
            long region = layout.targetRegion(c);
            n += region / Math.max(1, dataset.columns().get(c).recordBytes()) + region / CHUNK + 1;
        }
        return Math.toIntExact(n);
    }

    /**
     * The most copies a batch can need: one per piece of at least {@link #COPY_FROM} bytes, at most one per MiB of
     * each region.
     *
     * @param layout the slot layout of a batch
     * @param columns columns
     * @return the bound
     */
    static int copyCapacity(SlotLayout layout, int columns) {
        long n = 0;
        for (int c = 0; c < columns; c++) {
            n += layout.targetRegion(c) / COPY_FROM + 1;
        }
        return Math.toIntExact(n);
    }

    /**
     * Plans the batch in {@code plan}.
     *
     * @param plan the batch's pieces
     * @param layout the slot layout (column regions)
     * @param viewOffset for column {@code c}, the byte offset of its view in the slot's device memory
     * @param slotDevice device address of the slot's memory (0 in tests: destinations are then offsets)
     * @param shards addresses of the mapped shards
     * @throws IllegalStateException if the batch needs more copies or entries than the plan was sized for
     */
    void plan(SlotPlan plan, SlotLayout layout, long[] viewOffset, long slotDevice, Shards shards) {
        copies = 0;
        entryCount = 0;
        for (int c = 0; c < plan.columnCount(); c++) {
            ColumnPieces col = plan.column(c);
            columnFirst[c] = entryCount;
            for (int i = 0; i < col.count(); i++) {
                long len = col.end(i) - col.start(i);
                long dst = viewOffset[c] + col.view(i);
                if (len >= COPY_FROM) {
                    if (copies == copySrc.length) {
                        throw new IllegalStateException("a batch needs more than " + copySrc.length + " copies");
                    }
                    copySrc[copies] = shards.host(c, col.shard(i), col.start(i));
                    copyDst[copies] = dst;
                    copyLen[copies++] = len;
                    continue;
                }
                long src = shards.device(c, col.shard(i), col.start(i));
                for (long k = 0; k < len; k += CHUNK) {
                    if (ENTRY_LONGS * (entryCount + 1) > entries.length) {
                        throw new IllegalStateException("a batch needs more than " + entries.length / ENTRY_LONGS
                                + " gather entries");
                    }
                    int e = ENTRY_LONGS * entryCount++;
                    entries[e] = src + k;
                    entries[e + 1] = slotDevice + dst + k;
                    entries[e + 2] = Math.min(CHUNK, len - k);
                }
            }
            columnCount[c] = entryCount - columnFirst[c];
        }
    }

    /** @return copies of the batch planned last */
    int copies() {
        return copies;
    }

    /** @return host source address of copy {@code i} */
    long copySource(int i) {
        return copySrc[i];
    }

    /** @return destination offset in the slot's device memory of copy {@code i} */
    long copyTarget(int i) {
        return copyDst[i];
    }

    /** @return bytes of copy {@code i} */
    long copyBytes(int i) {
        return copyLen[i];
    }

    /** @return gather entries of the batch planned last, all columns */
    int entryCount() {
        return entryCount;
    }

    /** @return {src, dst, length} of every entry, {@link #ENTRY_LONGS} longs each; the first {@link #entryCount()} hold this batch */
    long[] entries() {
        return entries;
    }

    /** @return index of column {@code c}'s first entry */
    int columnFirst(int c) {
        return columnFirst[c];
    }

    /** @return entries of column {@code c} */
    int columnCount(int c) {
        return columnCount[c];
    }
}
