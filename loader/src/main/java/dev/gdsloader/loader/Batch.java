package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.memory.LeakDetector;
import dev.gdsloader.loader.sampler.EpochOrder;
import java.util.List;
import java.util.Optional;

/**
 * One batch handed to the consumer: {@link #records()} samples in the sampler's order (their global
 * record indices from {@link #recordIndices()}, padding flagged by {@link #isPadding(int)}), one
 * {@link ColumnView} per column, in a slot of the loader's prefetch ring.
 *
 * <p>On a device path the data is ready once {@link #readyEvent()} has completed: make your stream wait
 * for it with {@link #awaitOn(CudaStream)} (no host synchronisation), then, after enqueuing your work,
 * {@link #release(CudaStream)} so the loader refills the slot only after that work has run. Host-synchronous
 * users call {@link #close()} when done. The consumer owns one reference; {@link #retain()} adds more, and the
 * slot goes back when the count reaches zero (further releases do nothing). With
 * {@code -Dgdsloader.leakDetection=true} a batch collected unreleased is reported with where it was handed
 * out. Not thread-safe. Hold fewer batches than the prefetch depth, or the loader waits for you.
 */
public final class Batch implements AutoCloseable {
    /** Gives a slot back to the loader. */
    interface Releaser {
        void release(Batch batch, CudaStream consumerStream);
    }

    private final long index;
    private final EpochOrder order;
    private final int from;
    private final int records;
    private final List<ColumnView> columns;
    private final PathTaken path;
    private final CudaEvent ready;
    private final Releaser releaser;
    final int slot;
    private final LeakDetector.Tracker leak;
    private int refCount = 1;

    Batch(long index, EpochOrder order, int from, int records, List<ColumnView> columns, PathTaken path, CudaEvent ready,
          int slot, Releaser releaser) {
        this.index = index;
        this.order = order;
        this.from = from;
        this.records = records;
        this.columns = columns;
        this.path = path;
        this.ready = ready;
        this.slot = slot;
        this.releaser = releaser;
        this.leak = LeakDetector.enabled() ? LeakDetector.track(this, describe() + " (slot " + slot + ")")
                : LeakDetector.none();
    }

    /** @return batch index within the epoch, from 0 */
    public long index() {
        return index;
    }

    /** @return the epoch this batch belongs to, from 0 */
    public long epoch() {
        return order.epoch();
    }

    /** @return global index of the first record */
    public long firstRecord() {
        return order.get(from);
    }

    /** @return number of records (samples) in this batch */
    public int records() {
        return records;
    }

    /**
     * @param i position in the batch, {@code 0 <= i < records()}
     * @return the global record index of sample {@code i}
     * @throws IndexOutOfBoundsException if {@code i} is outside the batch
     */
    public long recordIndex(int i) {
        java.util.Objects.checkIndex(i, records);
        return order.get(from + i);
    }

    /** @return the global record indices of the batch's samples, in order (a copy) */
    public long[] recordIndices() {
        long[] r = new long[records];
        for (int i = 0; i < records; i++) {
            r[i] = order.get(from + i);
        }
        return r;
    }

    /**
     * @param i position in the batch
     * @return true if sample {@code i} is a repeat added to even out ranks ({@code Partition.PAD}); evaluation
     *     should drop it
     * @throws IndexOutOfBoundsException if {@code i} is outside the batch
     */
    public boolean isPadding(int i) {
        java.util.Objects.checkIndex(i, records);
        return order.isPadding(from + i);
    }

    /** @return e.g. "batch 3 of epoch 1 (records 40, 41, ... 49)" */
    public String describe() {
        return new dev.gdsloader.loader.plan.BatchPlan(index, order, from, records, List.of()).describe();
    }

    /** @return how many samples of this batch are padding */
    public int paddingCount() {
        int first = Math.max(from, order.firstPadded());
        return Math.max(0, from + records - first);
    }

    /** @return the column views, in dataset column order */
    public List<ColumnView> columns() {
        return columns;
    }

    /**
     * @param name column name
     * @return that column's view
     * @throws IllegalArgumentException if there is no such column
     */
    public ColumnView column(String name) {
        return columns.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("batch has no column '" + name + "'"));
    }

    /** @return useful bytes over all columns */
    public long bytes() {
        return columns.stream().mapToLong(ColumnView::bytes).sum();
    }

    /** @return how the bytes really travelled */
    public PathTaken path() {
        return path;
    }

    /** @return the event after which the data is in device memory; empty on the host path */
    public Optional<CudaEvent> readyEvent() {
        return Optional.ofNullable(ready);
    }

    /**
     * Makes {@code consumerStream} wait until the data is ready ({@code cudaStreamWaitEvent}); the host does
     * not block. On the host path it does nothing.
     *
     * @param consumerStream the consumer's stream
     */
    public void awaitOn(CudaStream consumerStream) {
        if (ready != null) {
            consumerStream.waitFor(ready);
        }
    }

    /**
     * Releases the batch once the work already enqueued on {@code consumerStream} has run: the loader
     * records an event there and refills the slot only after it.
     *
     * @param consumerStream the stream the consumer used the data on
     */
    public void release(CudaStream consumerStream) {
        drop(consumerStream);
    }

    /** Releases the batch now: the caller is done with its memory. */
    @Override
    public void close() {
        drop(null);
    }

    /**
     * Adds an owner: the slot is given back only when every owner has released ({@code release} or
     * {@code close} once per {@code retain}, plus once for the consumer that received it). Where owners use
     * different streams, the last to release must order its stream after the others' work.
     *
     * @return this
     * @throws IllegalStateException if the batch was already released
     */
    public Batch retain() {
        if (refCount == 0) {
            throw new IllegalStateException(describe() + " was already released");
        }
        refCount++;
        return this;
    }

    /** @return owners still holding the batch; 0 once its slot went back to the loader */
    public int refCount() {
        return refCount;
    }

    private void drop(CudaStream consumerStream) {
        if (refCount == 0) {
            return;
        }
        if (--refCount == 0) {
            leak.release();
            releaser.release(this, consumerStream);
        }
    }
}
