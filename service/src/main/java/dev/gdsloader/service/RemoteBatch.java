package dev.gdsloader.service;

import dev.gdsloader.cuda.CudaStream;
import java.util.List;

/**
 * One batch received from a {@link PrefetchServer}: its place in the epoch, the global record indices of its
 * samples and one {@link RemoteColumn} per column.
 *
 * <p>Ownership: the consumer owns the batch and must end it once, with {@link #close()} (host delivery: frees
 * the frame's buffer; CUDA IPC: tells the server at once that the slot may be reused) or, for CUDA IPC, with
 * {@link #release(CudaStream)} after enqueuing work on the mapped memory. Further calls do nothing. Hold fewer
 * batches than the server's slots, or the server waits for you. Not thread-safe.
 */
public final class RemoteBatch implements AutoCloseable {
    private final PrefetchClient client;
    private final Frame frame;
    private final Messages.BatchHeader header;
    private final Delivery delivery;
    private List<RemoteColumn> columns;
    private boolean closed;

    RemoteBatch(PrefetchClient client, Frame frame, Messages.BatchHeader header, Delivery delivery) {
        this.client = client;
        this.frame = frame;
        this.header = header;
        this.delivery = delivery;
    }

    void columns(List<RemoteColumn> cols) {
        this.columns = List.copyOf(cols);
    }

    /** @return the epoch, from 0 */
    public long epoch() {
        return header.epoch();
    }

    /** @return batch index within the epoch, from 0 */
    public long index() {
        return header.index();
    }

    /** @return number of records (samples) */
    public int records() {
        return header.recordIndices().length;
    }

    /**
     * @param i position in the batch
     * @return the global record index of sample {@code i}
     * @throws IndexOutOfBoundsException if {@code i} is outside the batch
     */
    public long recordIndex(int i) {
        return header.recordIndices()[java.util.Objects.checkIndex(i, records())];
    }

    /** @return the global record indices, in order (a copy) */
    public long[] recordIndices() {
        return header.recordIndices().clone();
    }

    /** @return how many trailing samples are padding ({@code Partition.PAD}), to be dropped by evaluation */
    public int paddingCount() {
        return header.padding();
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

    /** Releases the batch now: frees its frame, or tells the server the slot is free. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        frame.release();
        if (delivery == Delivery.CUDA_IPC) {
            client.releaseRemote(header.id());
        }
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("batch " + index() + " of epoch " + epoch() + " was already released");
        }
    }

    @Override
    public String toString() {
        return "batch " + index() + " of epoch " + epoch() + " (" + records() + " records, " + delivery + ")";
    }
}
