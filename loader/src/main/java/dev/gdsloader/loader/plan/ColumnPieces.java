package dev.gdsloader.loader.plan;

/**
 * The pieces of one column of one batch, in arrays sized once for the largest batch and refilled for
 * every batch that lands in the same slot (no allocation per batch). Piece {@code i} is bytes
 * {@code [start[i], end[i])} of shard {@code shard[i]}, landing at {@code view[i]} in the column view.
 *
 * <p>Owned by one slot; written by the loader's reader thread before the slot's reads start, read by the
 * I/O threads and the consumer after. Not thread-safe by itself: the pipeline's queues order the accesses.
 */
public final class ColumnPieces {
    private final int column;
    private final int[] shard;
    private final long[] start;
    private final long[] end;
    private final long[] view;
    private int count;
    private long bytes;

    /**
     * @param column column index
     * @param capacity the most pieces a batch of this column can need
     */
    public ColumnPieces(int column, int capacity) {
        this.column = column;
        this.shard = new int[capacity];
        this.start = new long[capacity];
        this.end = new long[capacity];
        this.view = new long[capacity];
    }

    void clear() {
        count = 0;
        bytes = 0;
    }

    void add(int shardIndex, long fileStart, long fileEnd) {
        if (count == shard.length) {
            throw new IllegalStateException("column " + column + ": a batch needs more than " + shard.length
                    + " pieces, the bound the slot was sized for");
        }
        shard[count] = shardIndex;
        start[count] = fileStart;
        end[count] = fileEnd;
        view[count] = bytes;
        bytes += fileEnd - fileStart;
        count++;
    }

    /** @return column index in the dataset */
    public int column() {
        return column;
    }

    /** @return number of pieces */
    public int count() {
        return count;
    }

    /** @return bytes of the column view (sum of piece lengths) */
    public long bytes() {
        return bytes;
    }

    /**
     * @param i piece index
     * @return shard of piece {@code i}
     */
    public int shard(int i) {
        return shard[i];
    }

    /**
     * @param i piece index
     * @return first file byte of piece {@code i}
     */
    public long start(int i) {
        return start[i];
    }

    /**
     * @param i piece index
     * @return one past the last file byte of piece {@code i}
     */
    public long end(int i) {
        return end[i];
    }

    /**
     * @param i piece index
     * @return where piece {@code i} lands, relative to the column view start
     */
    public long view(int i) {
        return view[i];
    }

    /** @return head padding: how far the first byte sits past its 4 KiB boundary */
    public long headPad() {
        return count == 0 ? 0 : start[0] - Alignment.down(start[0]);
    }
}
