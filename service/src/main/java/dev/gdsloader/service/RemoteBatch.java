package dev.gdsloader.service;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.LoaderState;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;

/**
 * One batch received from a {@link PrefetchServer}: its place in the epoch, the global record indices of its
 * samples, the loader state after it and one {@link RemoteColumn} per column.
 *
 * <p>Ownership: the consumer owns the batch and must end it once, with {@link #close()} (host delivery: releases the
 * Arrow buffers it holds; CUDA IPC: tells the server the slot may be reused) or, for CUDA IPC, with
 * {@link #release(CudaStream)} after enqueuing work on the mapped memory. Further calls do nothing. Hold fewer
 * batches than the server's slots (CUDA IPC), or the server waits for you. Not thread-safe.
 */
public final class RemoteBatch implements AutoCloseable {
    private final PrefetchClient client;
    private final long epoch;
    private final long index;
    private final long[] records;
    private final int padding;
    private final Delivery delivery;
    /** The loader state's JSON from the batch's metadata, parsed when first asked for ({@link #state()}). */
    private final com.fasterxml.jackson.databind.JsonNode stateJson;
    private volatile LoaderState state;
    private final long id;
    private final List<ArrowBuf> retained;
    private PrefetchClient.IpcStream ipc;
    private List<RemoteColumn> columns;
    private boolean closed;

    RemoteBatch(PrefetchClient client, long epoch, long index, long[] records, int padding, Delivery delivery,
                com.fasterxml.jackson.databind.JsonNode state, long id, List<ArrowBuf> retained) {
        this.client = client;
        this.epoch = epoch;
        this.index = index;
        this.records = records;
        this.padding = padding;
        this.delivery = delivery;
        this.stateJson = state;
        this.id = id;
        this.retained = retained;
    }

    void columns(List<RemoteColumn> cols) {
        this.columns = List.copyOf(cols);
    }

    void ipc(PrefetchClient.IpcStream stream) {
        this.ipc = stream;
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

    /** @return the columns, in dataset order */
    public List<RemoteColumn> columns() {
        return columns;
    }

    /**
     * @param name column name
     * @return that column
     * @throws IllegalArgumentException if there is no such column
     */
    public RemoteColumn column(String name) {
        return columns.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("batch has no column '" + name + "'"));
    }

    /**
     * CUDA IPC: waits until the work already enqueued on {@code stream} is done ({@code cudaStreamSynchronize}),
     * then releases the batch so the server may refill the slot. Host delivery: the same as {@link #close()}.
     *
     * @param stream the stream the consumer used the data on
     */
    public void release(CudaStream stream) {
        if (!closed && delivery == Delivery.CUDA_IPC) {
            stream.synchronize();
        }
        close();
    }

    /** Releases the batch now: its Arrow buffers, or (CUDA IPC) tells the server the slot is free. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ArrowBuf b : retained) {
            b.getReferenceManager().release();
        }
        if (ipc != null) {
            ipc.release(client.allocator(), id);
        }
        client.released(this);
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("batch " + index + " of epoch " + epoch + " was already released");
        }
    }

    @Override
    public String toString() {
        return "batch " + index + " of epoch " + epoch + " (" + records.length + " records, " + delivery + ")";
    }
}
