package dev.gdsloader.service.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.cuda.CudaIpc;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.memory.IllegalReferenceCountException;
import dev.gdsloader.service.protocol.Delivery;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One batch received from a prefetch server: its place in the epoch, the global record indices of its samples, the
 * loader state after it and one {@link RemoteColumn} per column.
 *
 * <p>The same contract as a local {@code dev.gdsloader.loader.Batch}. On CUDA IPC the data is ready on the device
 * once the server's interprocess event has completed: make your stream wait for it with {@link #awaitOn(CudaStream)}
 * (no host synchronisation), then, after enqueuing your work, {@link #release(CudaStream)}: an interprocess event is
 * recorded on your stream and the server refills the slot only after it. Callers that pass no stream get the host
 * waits of before: a column's {@link RemoteColumn#devicePointer()} or {@link RemoteColumn#toByteArray()} of a batch not
 * awaited on a stream first waits for the server's event on the host, and {@link #close()} releases at once (the
 * caller's work on the memory is done). HOST delivery: {@link #close()} (or {@code release}, the same) releases the
 * Arrow buffers the columns are views of.
 *
 * <p>The consumer owns one reference; {@link #retain()} adds more and the batch is released when the count reaches
 * zero. Misuse fails loudly, as the local batch does: a release past zero, a retain after the last release, and every
 * accessor that reaches the batch's memory ({@link #columns()}, {@link #column}, {@link #awaitOn} and the columns'
 * accessors) throw {@link IllegalReferenceCountException} naming the batch; a host buffer handed out before throws
 * {@link IllegalStateException} when read after the release, instead of reading freed memory. What the batch is
 * (epoch, index, records, padding, state, delivery) stays readable. The count is atomic; the accessors are for one
 * thread at a time. Hold fewer batches than the server's slots (CUDA IPC), or the server waits for you.
 */
public final class RemoteBatch implements AutoCloseable {
    /** Ends a batch once its last reference is released: gives its memory back to the server or to the allocator. */
    interface Releaser {
        /**
         * @param batch the batch
         * @param consumerStream the stream whose work must run before the server reuses the memory, or null (done now)
         */
        void release(RemoteBatch batch, CudaStream consumerStream);
    }

    private static final AtomicIntegerFieldUpdater<RemoteBatch> REF_COUNT =
            AtomicIntegerFieldUpdater.newUpdater(RemoteBatch.class, "refCount");

    /** Set when the client (or its epoch) released the batch on closing, for the use-after-release message. */
    private volatile boolean releasedByClose;
    private final long epoch;
    private final long index;
    private final long[] records;
    private final int padding;
    private final Delivery delivery;
    /** The loader state's JSON from the batch's metadata, parsed when first asked for ({@link #state()}). */
    private final JsonNode stateJson;
    private volatile LoaderState state;
    /** CUDA IPC: the server's interprocess ready event (owned by the exchange), or null where there is none. */
    private final CudaIpc.OpenedEvent ready;
    private final Releaser releaser;
    /** CUDA IPC: whether the ready event was awaited (on a consumer's stream or on the host). */
    private boolean awaited;
    private List<RemoteColumn> columns = List.of();
    private volatile int refCount = 1;

    RemoteBatch(long epoch, long index, long[] records, int padding, Delivery delivery, JsonNode state,
                CudaIpc.OpenedEvent ready, Releaser releaser) {
        this.epoch = epoch;
        this.index = index;
        this.records = records;
        this.padding = padding;
        this.delivery = delivery;
        this.stateJson = state;
        this.ready = ready;
        this.releaser = releaser;
    }

    void columns(List<RemoteColumn> cols) {
        this.columns = List.copyOf(cols);
    }

    /** @return the epoch, from 0 */
    public long epoch() {
        return epoch;
    }

    /** @return batch index within the epoch, from 0 */
    public long index() {
        return index;
    }

    /** @return number of records (samples) */
    public int records() {
        return records.length;
    }

    /**
     * @param i position in the batch
     * @return the global record index of sample {@code i}
     * @throws IndexOutOfBoundsException if {@code i} is outside the batch
     */
    public long recordIndex(int i) {
        return records[java.util.Objects.checkIndex(i, records.length)];
    }

    /** @return the global record indices, in order (a copy) */
    public long[] recordIndices() {
        return records.clone();
    }

    /** @return how many trailing samples are padding ({@code Partition.PAD}), to be dropped by evaluation */
    public int paddingCount() {
        return padding;
    }

    /**
     * @return the loader state after this batch: a client resumed from it continues with the next batch (parsed from
     *     the batch's metadata on the first call, not per batch)
     * @throws IllegalArgumentException if the server sent a state this build cannot read
     */
    public LoaderState state() {
        LoaderState s = state;
        if (s == null) {
            s = LoaderState.fromJson(stateJson.toString());
            state = s;
        }
        return s;
    }

    /** @return how the bytes arrived */
    public Delivery delivery() {
        return delivery;
    }

    /**
     * @return the columns, in dataset order
     * @throws IllegalReferenceCountException if the batch was released
     */
    public List<RemoteColumn> columns() {
        ensureAccessible();
        return columns;
    }

    /**
     * @param name column name
     * @return that column
     * @throws IllegalArgumentException if there is no such column
     * @throws IllegalReferenceCountException if the batch was released
     */
    public RemoteColumn column(String name) {
        ensureAccessible();
        return columns.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("batch has no column '" + name + "'"));
    }

    /**
     * CUDA IPC: makes {@code consumerStream} wait until the server's data is ready ({@code cuStreamWaitEvent} on the
     * server's interprocess event); the host does not block. Where the server sent no event (the batch was complete
     * when sent) and for HOST delivery it does nothing.
     *
     * @param consumerStream the consumer's stream
     * @throws IllegalReferenceCountException if the batch was released
     */
    public void awaitOn(CudaStream consumerStream) {
        ensureAccessible();
        if (ready != null) {
            ready.awaitOn(consumerStream);
        }
        awaited = true;
    }

    /**
     * CUDA IPC: releases the batch once the work already enqueued on {@code consumerStream} has run: an interprocess
     * event is recorded there and the server refills the slot only after it (where the driver refuses interprocess
     * events, the stream is synchronized first). HOST delivery: the same as {@link #close()}.
     *
     * @param consumerStream the stream the consumer used the data on
     * @throws IllegalReferenceCountException if the batch was already released as often as it was retained
     */
    public void release(CudaStream consumerStream) {
        drop(consumerStream);
    }

    /**
     * Releases the batch now: its Arrow buffers (HOST), or the server may refill the slot at once (CUDA IPC: the
     * caller's work on the memory is done).
     *
     * @throws IllegalReferenceCountException if the batch was already released as often as it was retained
     */
    @Override
    public void close() {
        drop(null);
    }

    /**
     * Adds an owner: the batch is released only when every owner has released ({@code release} or {@code close} once
     * per {@code retain}, plus once for the consumer that received it).
     *
     * @return this
     * @throws IllegalReferenceCountException if the batch was already released
     */
    public RemoteBatch retain() {
        while (true) {
            int n = refCount;
            if (n <= 0) {
                throw new IllegalReferenceCountException(this + " was already released: it cannot be retained");
            }
            if (REF_COUNT.compareAndSet(this, n, n + 1)) {
                return this;
            }
        }
    }

    /** @return owners still holding the batch; 0 once it was released */
    public int refCount() {
        return refCount;
    }

    /**
     * One volatile read, as Netty's {@code ensureAccessible}: every accessor of the batch's memory calls it.
     *
     * @throws IllegalReferenceCountException if the batch was released
     */
    void ensureAccessible() {
        if (refCount == 0) {
            throw new IllegalReferenceCountException(this + (releasedByClose
                    ? " was released when its client (or epoch) closed with the batch held" : " was already released")
                    + ": its memory is no longer readable");
        }
    }

    /**
     * The default of callers that pass no stream: before device memory is handed out of a batch not awaited on a
     * stream, the host waits for the server's ready event ({@code cuEventSynchronize}), once.
     */
    void awaitReadyOnHost() {
        if (ready != null && !awaited) {
            ready.synchronize();
            awaited = true;
        }
    }

    /**
     * Waits on the host for the server's ready event ({@code cuEventSynchronize}), whether or not a stream awaited it:
     * before a copy that is not ordered on the consumer's stream (a synchronous {@code cudaMemcpy}).
     */
    void synchronizeReady() {
        if (ready != null) {
            ready.synchronize();
        }
    }

    /** Releases the batch whatever its count (the client closing with batches still held). */
    void releaseAll() {
        releasedByClose = true;
        int n = REF_COUNT.getAndSet(this, 0);
        if (n > 0) {
            releaser.release(this, null);
        }
    }

    private void drop(CudaStream consumerStream) {
        while (true) {
            int n = refCount;
            if (n <= 0) {
                throw new IllegalReferenceCountException(this + " was already released (released more often than retained)");
            }
            if (REF_COUNT.compareAndSet(this, n, n - 1)) {
                if (n == 1) {
                    releaser.release(this, consumerStream);
                }
                return;
            }
        }
    }

    @Override
    public String toString() {
        return "batch " + index + " of epoch " + epoch + " (" + records.length + " records, " + delivery + ")";
    }
}
