package dev.gdsloader.loader.plan;

import dev.gdsloader.loader.sampler.EpochOrder;

/**
 * The reads behind the batch a slot is holding: entries {@code [from, from + records)} of an epoch's order,
 * and per column the pieces they need. One per slot, refilled for each batch (no allocation per batch).
 *
 * <p>Written by the reader thread before the slot's reads start; read after. Not thread-safe by itself.
 */
public final class SlotPlan {
    private final ColumnPieces[] columns;
    private long index;
    private EpochOrder order;
    private int from;
    private int records;
    private long[] scratch = new long[0];

    /**
     * @param maxPieces for each column, the most pieces one batch of it can need
     */
    public SlotPlan(int[] maxPieces) {
        columns = new ColumnPieces[maxPieces.length];
        for (int c = 0; c < columns.length; c++) {
            columns[c] = new ColumnPieces(c, maxPieces[c]);
        }
    }

    void reset(long batchIndex, EpochOrder epochOrder, int first, int count) {
        index = batchIndex;
        order = epochOrder;
        from = first;
        records = count;
        for (ColumnPieces c : columns) {
            c.clear();
        }
    }

    /**
     * @param n records of the batch being planned
     * @return an array of at least {@code n} entries for the batch's global record indices, reused across batches
     *     (allocated again only when a batch is longer than every earlier one)
     */
    long[] recordScratch(int n) {
        if (scratch.length < n) {
            scratch = new long[n];
        }
        return scratch;
    }

    /** @return batch index within the epoch */
    public long index() {
        return index;
    }

    /** @return the epoch's order */
    public EpochOrder order() {
        return order;
    }

    /** @return position of the batch's first entry in the order */
    public int from() {
        return from;
    }

    /** @return records in the batch */
    public int records() {
        return records;
    }

    /** @return number of columns */
    public int columnCount() {
        return columns.length;
    }

    /**
     * @param c column index
     * @return that column's pieces
     */
    public ColumnPieces column(int c) {
        return columns[c];
    }

    /** @return useful bytes over all columns */
    public long bytes() {
        long b = 0;
        for (ColumnPieces c : columns) {
            b += c.bytes();
        }
        return b;
    }

    /** @return a description for messages, e.g. "batch 3 of epoch 1 (records 40, 41, ... 49)" */
    public String describe() {
        return describe(index, order, from, records);
    }

    /**
     * Describes a batch for messages.
     *
     * @param index batch index within the epoch
     * @param order the epoch's order
     * @param from position of the batch's first entry in the order
     * @param records records in the batch, at least 1
     * @return e.g. "batch 3 of epoch 1 (records 40, 41, ... 49)"
     */
    public static String describe(long index, EpochOrder order, int from, int records) {
        return "batch " + index + " of epoch " + order.epoch() + " (records " + order.get(from)
                + (records > 1 ? (records > 2 ? ", " + order.get(from + 1) + ", ... " : ", ") + order.get(from + records - 1) : "")
                + ")";
    }
}
