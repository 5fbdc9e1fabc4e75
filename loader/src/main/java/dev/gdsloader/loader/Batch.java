package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.memory.IllegalReferenceCountException;
import dev.gdsloader.memory.LeakDetector;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One batch handed to the consumer: {@link #records()} samples in the sampler's order (their global
 * record indices from {@link #recordIndices()}, padding flagged by {@link #isPadding(int)}), one
 * {@link ColumnView} per column, in a slot of the loader's prefetch ring.
 *
 * <p>On a device path the data is ready once {@link #readyEvent()} has completed: make your stream wait
 * for it with {@link #awaitOn(CudaStream)} (no host synchronisation), then, after enqueuing your work,
 * {@link #release(CudaStream)} so the loader refills the slot only after that work has run. Host-synchronous
 * users call {@link #close()} when done. The consumer owns one reference; {@link #retain()} adds more, and the
 * slot goes back when the count reaches zero. Misuse fails loudly, as Netty's {@code ByteBuf} does: a release
 * past zero, a retain after the last release, and every accessor that reaches the slot ({@link #columns()},
 * {@link #column}, {@link #bytes()}, {@link #readyEvent()}, {@link #awaitOn}, and every accessor of the column
 * views), which would read whatever batch the slot holds next, throw {@link IllegalReferenceCountException}
 * naming the batch. What the batch is (its index, epoch, records and their indices, padding, path,
 * {@link #describe()}, {@link #refCount()}) stays readable after release, as it is the batch's own. Leak detection ({@link LeakDetector}: sampled by
 * default, every batch with {@code -Dgdsloader.leakDetection.level=paranoid}) reports a batch collected unreleased
 * with where it was handed out.
 *
 * <p>The reference count is atomic, so owners on different threads may retain and release; the accessors are
 * for one thread at a time. Hold fewer batches than the prefetch depth, or the loader waits for you.
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
    private final ColumnView[] views;
    private final List<ColumnView> columns;
    private final PathTaken path;
    private final long stagedBytes;
    private final CudaEvent ready;
    private final Releaser releaser;
    final int slot;
    private final LeakDetector.Tracker leak;
    private static final AtomicIntegerFieldUpdater<Batch> REF_COUNT =
            AtomicIntegerFieldUpdater.newUpdater(Batch.class, "refCount");
    private volatile int refCount = 1;

    /**
     * @param columns the slot's column state, filled for this batch; each gets a view that checks this batch
     * @param stagedBytes bytes of the batch that went through pinned staging on the MAPPED path (see {@link #stagedBytes()})
     */
    Batch(long index, EpochOrder order, int from, int records, SlotColumn[] columns, PathTaken path, long stagedBytes,
          CudaEvent ready, int slot, Releaser releaser) {
        this.index = index;
        this.order = order;
        this.from = from;
        this.records = records;
        this.views = new ColumnView[columns.length];
        for (int c = 0; c < views.length; c++) {
            views[c] = new ColumnView(this, columns[c]);
        }
        this.columns = new Views(views);
        this.path = path;
        this.stagedBytes = stagedBytes;
        this.ready = ready;
        this.slot = slot;
        this.releaser = releaser;
        this.leak = LeakDetector.sample() ? LeakDetector.trackSampled(this, describe() + " (slot " + slot + ")", null)
                : LeakDetector.none();
    }

    /**
     * The same batch for another member of a device group: the same index, epoch, records and path, over that member's
     * copy of the slot (its column state and ready event), with its own reference count and releaser.
     *
     * @param memberColumns the member's column state, filled for this batch
     * @param memberReady the event after which the member's copy is in its device memory; null on the host path
     * @param memberReleaser gives the member's share of the slot back
     * @return a new batch, owned by the member's consumer
     */
    Batch sibling(SlotColumn[] memberColumns, CudaEvent memberReady, Releaser memberReleaser) {
        return new Batch(index, order, from, records, memberColumns, path, stagedBytes, memberReady, slot, memberReleaser);
    }

    /**
     * One volatile read, as Netty's {@code ensureAccessible}: every accessor of the batch and of its views calls it.
     *
     * @throws IllegalReferenceCountException if the batch was released
     */
    void ensureAccessible() {
        if (refCount == 0) {
            throw new IllegalReferenceCountException(describe() + " was already released: its slot may hold another "
                    + "batch now, so its data and views are no longer readable");
        }
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

    /**
     * The column views as an unmodifiable list: one object over the views array (a batch is made per batch delivered,
     * so it costs one list object instead of an array wrapper and an unmodifiable wrapper of it).
     */
    private static final class Views extends java.util.AbstractList<ColumnView> implements java.util.RandomAccess {
        private final ColumnView[] views;

        Views(ColumnView[] views) {
            this.views = views;
        }

        @Override
        public ColumnView get(int index) {
            return views[java.util.Objects.checkIndex(index, views.length)];
        }

        @Override
        public int size() {
            return views.length;
        }
    }

    /** @return the column views, in dataset column order */
    public List<ColumnView> columns() {
        ensureAccessible();
        return columns;
    }

    /**
     * @param name column name
     * @return that column's view
     * @throws IllegalArgumentException if there is no such column
     */
    public ColumnView column(String name) {
        ensureAccessible();
        for (ColumnView v : views) {
            if (v.column.name.equals(name)) {
                return v;
            }
        }
        throw new IllegalArgumentException(describe() + " has no column '" + name + "'");
    }

    /** @return useful bytes over all columns */
    public long bytes() {
        ensureAccessible();
        long n = 0;
        for (ColumnView v : views) {
            n += v.column.bytes;
        }
        return n;
    }

    /**
     * @return how the bytes really travelled; on {@link PathTaken#MAPPED}, {@link #stagedBytes()} says how many of
     *     them went through pinned staging instead
     */
    public PathTaken path() {
        return path;
    }

    /**
     * Bytes of this batch that went through pinned host staging on the {@link PathTaken#MAPPED} path: the pieces of
     * host-decoded shards (compressed Arrow bodies, deflated {@code .npz} members), which the GPU cannot read as
     * stored, are decoded on the host into the slot's pinned staging and copied into the same column views, ordered
     * before {@link #readyEvent()}. The rest of {@link #bytes()} was read by the GPU from registered shards. 0 where
     * every byte was mapped, and on every other path (BOUNCE and HOST stage every byte by definition; GDS's staged
     * small pieces are its own routing, see {@code GdsLoader.pathReason()}). Readable after release.
     *
     * @return bytes, {@code 0 <= stagedBytes() <= bytes()}
     */
    public long stagedBytes() {
        return stagedBytes;
    }

    /** @return the event after which the data is in device memory; empty on the host path */
    public Optional<CudaEvent> readyEvent() {
        ensureAccessible();
        return Optional.ofNullable(ready);
    }

    /**
     * Makes {@code consumerStream} wait until the data is ready ({@code cudaStreamWaitEvent}); the host does
     * not block. On the host path it does nothing.
     *
     * @param consumerStream the consumer's stream
     */
    public void awaitOn(CudaStream consumerStream) {
        ensureAccessible();
        if (ready != null) {
            consumerStream.waitFor(ready);
        }
    }

    /**
     * Releases the batch once the work already enqueued on {@code consumerStream} has run: the loader
     * records an event there and refills the slot only after it.
     *
     * @param consumerStream the stream the consumer used the data on
     * @throws IllegalReferenceCountException if the batch was already released as often as it was retained
     */
    public void release(CudaStream consumerStream) {
        drop(consumerStream);
    }

    /**
     * Releases the batch now: the caller is done with its memory.
     *
     * @throws IllegalReferenceCountException if the batch was already released as often as it was retained
     */
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
     * @throws IllegalReferenceCountException if the batch was already released
     */
    public Batch retain() {
        while (true) {
            int n = refCount;
            if (n <= 0) {
                throw new IllegalReferenceCountException(describe() + " was already released: it cannot be retained");
            }
            if (REF_COUNT.compareAndSet(this, n, n + 1)) {
                return this;
            }
        }
    }

    /** @return owners still holding the batch; 0 once its slot went back to the loader */
    public int refCount() {
        return refCount;
    }

    private void drop(CudaStream consumerStream) {
        while (true) {
            int n = refCount;
            if (n <= 0) {
                throw new IllegalReferenceCountException(describe() + " was already released (released more often than "
                        + "retained)");
            }
            if (REF_COUNT.compareAndSet(this, n, n - 1)) {
                if (n == 1) {
                    leak.release();
                    releaser.release(this, consumerStream);
                }
                return;
            }
        }
    }
}
