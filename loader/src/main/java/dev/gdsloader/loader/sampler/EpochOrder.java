package dev.gdsloader.loader.sampler;

import java.util.Objects;
import java.util.function.LongUnaryOperator;

/**
 * One rank's records for one epoch, in delivery order: entry {@code i} is global record {@link #get(int)}.
 * Entries are computed on demand (no array of records is kept), so an epoch costs no memory per record.
 *
 * <p>Immutable and thread-safe.
 */
public final class EpochOrder {
    private final long epoch;
    private final int size;
    private final int firstPadded;
    private final long start;
    private final long total;
    private final LongUnaryOperator global;

    /**
     * An order given as an array, for tools and tests.
     *
     * @param epoch the epoch
     * @param records global record indices in delivery order (not copied)
     * @param firstPadded index from which entries are padding; {@code records.length} for none
     */
    public EpochOrder(long epoch, long[] records, int firstPadded) {
        this(epoch, records.length, firstPadded, 0, records.length, p -> records[(int) p]);
    }

    /**
     * @param epoch the epoch
     * @param size entries of this rank
     * @param firstPadded index from which entries are padding
     * @param start this rank's first position in the epoch's global order
     * @param total length of the global order (positions wrap around it for padding)
     * @param global maps a global position in {@code [0, total)} to a record index
     */
    EpochOrder(long epoch, int size, int firstPadded, long start, long total, LongUnaryOperator global) {
        this.epoch = epoch;
        this.size = size;
        this.firstPadded = firstPadded;
        this.start = start;
        this.total = total;
        this.global = global;
    }

    /** @return the epoch, from 0 */
    public long epoch() {
        return epoch;
    }

    /** @return number of entries */
    public int size() {
        return size;
    }

    /** @return index from which entries are padding; {@link #size()} when there is none */
    public int firstPadded() {
        return firstPadded;
    }

    /**
     * @param i entry index, {@code 0 <= i < size()}
     * @return the global record index of entry {@code i}
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public long get(int i) {
        Objects.checkIndex(i, size);
        return global.applyAsLong((start + i) % total);
    }

    /**
     * @param i entry index
     * @return true if entry {@code i} is a repeat added by {@link Partition#PAD}
     */
    public boolean isPadding(int i) {
        return i >= firstPadded;
    }

    /** @return all entries as a new array (for tools and tests; the loader itself never materialises it) */
    public long[] records() {
        long[] r = new long[size];
        for (int i = 0; i < size; i++) {
            r[i] = get(i);
        }
        return r;
    }
}
