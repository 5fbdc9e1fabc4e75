package dev.gdsloader.loader.io;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.spi.SlotLayout;

/**
 * How one batch moves on the MAPPED path, planned on the host without touching any mapping: each piece (a run of
 * records of one shard) of at least {@link #COPY_FROM} bytes is one copy by the copy engine from the registered host
 * address into the slot ({@code cudaMemcpyAsync}); the smaller pieces of a column are gathered by one kernel launch
 * per column ({@link GatherKernel}), described in one of two ways:
 * <ul>
 *   <li><b>records</b> (a column of records of at most {@link #CHUNK} bytes, none copied, its pieces filling the view
 *       in record order: a shuffled batch): one source address per record ({@code gather_records}, 8 bytes per
 *       record, the destination implied by the record's place in the batch);</li>
 *   <li><b>entries</b> (otherwise): {@code {src, dst, length}} per entry of at most {@link #CHUNK} bytes
 *       ({@code gather}), so that a long piece is read by many warps.</li>
 * </ul>
 * Sources are device addresses in the mappings; destinations device addresses in the slot's column view.
 *
 * <p>Pieces of host-decoded shards (compressed Arrow bodies, deflated {@code .npz} members: not mappable, see
 * {@code MappedEngine}) are left out of the copies and entries and only counted ({@link #stagedBytes()}): the engine
 * decodes them on the host into the slot's pinned staging and copies them into the same view. A column with such a
 * piece in the batch is gathered by entry, as its mapped records no longer fill the view in order.
 *
 * <p>Sized once per ring entry ({@link #entryCapacity}); {@link #plan} refills it per batch without allocating. One
 * batch at a time (a pool thread plans and issues). Not thread-safe.
 */
final class MappedPlan {
    /** Pieces of at least this many bytes go by {@code cudaMemcpyAsync} (1 MiB: copies that size run near the link's peak). */
    static final long COPY_FROM = 1 << 20;
    /** Gather entries cover at most this many bytes (a multiple of 16), so that a long piece is read by many warps. */
    static final long CHUNK = 64 << 10;
    /** Longs per gather entry: src, dst, length. */
    static final int ENTRY_LONGS = GatherKernel.ENTRY_LONGS;

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

    private final long[] recordBytes;
    private final long[] copySrc;
    private final long[] copyDst;
    private final long[] copyLen;
    private final long[] entries;
    private final int[] columnFirst;
    private final int[] columnCount;
    private final boolean[] byRecord;
    /** Per column and shard: true where the shard is host-decoded (its pieces are staged); null where none is. */
    private final boolean[][] staged;
    private int copies;
    private int used;
    private long stagedBytes;

    /**
     * @param recordBytes for each column, bytes per record
     * @param maxCopies the most copies one batch can need (the pieces of all columns)
     * @param maxEntries the most gather entries one batch can need
     * @param staged per column and shard, true where the shard is host-decoded and its pieces are staged by the
     *     engine instead; null where no shard is (nothing is then checked per piece)
     */
    MappedPlan(long[] recordBytes, int maxCopies, int maxEntries, boolean[][] staged) {
        this.recordBytes = recordBytes.clone();
        this.staged = staged;
        this.copySrc = new long[maxCopies];
        this.copyDst = new long[maxCopies];
        this.copyLen = new long[maxCopies];
        this.entries = new long[ENTRY_LONGS * maxEntries];
        this.columnFirst = new int[recordBytes.length];
        this.columnCount = new int[recordBytes.length];
        this.byRecord = new boolean[recordBytes.length];
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
        used = 0;
        stagedBytes = 0;
        for (int c = 0; c < plan.columnCount(); c++) {
            ColumnPieces col = plan.column(c);
            boolean[] stagedShard = staged == null ? null : staged[c];
            columnFirst[c] = used;
            byRecord[c] = byRecord(col, recordBytes[c], stagedShard);
            if (byRecord[c]) {
                long rb = recordBytes[c];
                for (int i = 0; i < col.count(); i++) {
                    long src = shards.device(c, col.shard(i), col.start(i));
                    long n = (col.end(i) - col.start(i)) / rb;
                    if (used + n > entries.length) {
                        throw new IllegalStateException("a batch needs more than " + entries.length + " gathered records");
                    }
                    for (long k = 0; k < n; k++) {
                        entries[used++] = src + k * rb;
                    }
                }
                columnCount[c] = used - columnFirst[c];
                continue;
            }
            for (int i = 0; i < col.count(); i++) {
                long len = col.end(i) - col.start(i);
                if (stagedShard != null && stagedShard[col.shard(i)]) {
                    stagedBytes += len;
                    continue;
                }
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
                    if (used + ENTRY_LONGS > entries.length) {
                        throw new IllegalStateException("a batch needs more than " + entries.length / ENTRY_LONGS
                                + " gather entries");
                    }
                    entries[used] = src + k;
                    entries[used + 1] = slotDevice + dst + k;
                    entries[used + 2] = Math.min(CHUNK, len - k);
                    used += ENTRY_LONGS;
                }
            }
            columnCount[c] = (used - columnFirst[c]) / ENTRY_LONGS;
        }
    }

    /**
     * Whether a column's pieces go by record: records of at most {@link #CHUNK} bytes, no piece to copy, and the
     * pieces filling the view from its start in order (piece {@code i} at the view offset where the records before it
     * end), so that record {@code r} of the batch lands at {@code view + r * recordBytes}; none of them staged.
     */
    private static boolean byRecord(ColumnPieces col, long recordBytes, boolean[] stagedShard) {
        if (recordBytes > CHUNK) {
            return false;
        }
        long at = 0;
        for (int i = 0; i < col.count(); i++) {
            long len = col.end(i) - col.start(i);
            if (len >= COPY_FROM || col.view(i) != at || len % recordBytes != 0
                    || (stagedShard != null && stagedShard[col.shard(i)])) {
                return false;
            }
            at += len;
        }
        return true;
    }

    /**
     * @return bytes of the batch planned last in pieces of host-decoded shards, left to the engine's staging (not in
     *     any copy or entry); 0 where the plan has no staged shard
     */
    long stagedBytes() {
        return stagedBytes;
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

    /** @return longs of gather description the batch planned last uses, all columns (to upload: {@link #entries()}) */
    int usedLongs() {
        return used;
    }

    /**
     * @return the gather description of every column, back to back from index 0: a column gathered by record holds
     *     one source address per record; otherwise {@link #ENTRY_LONGS} longs ({@code src, dst, length}) per entry
     */
    long[] entries() {
        return entries;
    }

    /** @return index in {@link #entries()} of column {@code c}'s first long */
    int columnFirst(int c) {
        return columnFirst[c];
    }

    /** @return records (gathered by record) or entries of column {@code c} */
    int columnCount(int c) {
        return columnCount[c];
    }

    /** @return true if column {@code c} is gathered by record ({@code gather_records}), false by entry */
    boolean byRecord(int c) {
        return byRecord[c];
    }
}
