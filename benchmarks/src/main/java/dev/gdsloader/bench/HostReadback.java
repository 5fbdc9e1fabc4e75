package dev.gdsloader.bench;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import java.lang.foreign.MemorySegment;

/**
 * Brings batch columns back to the host for checking: device columns are copied into a pinned buffer on
 * the reader's own stream after it waited for the batch's ready event; host columns are returned as they
 * are. Owns its stream and pinned buffer; not thread-safe.
 */
public final class HostReadback implements AutoCloseable {
    private final CudaStream stream;
    private final PinnedBuffer back;

    /**
     * @param maxColumnBytes the largest column view it will copy, bytes
     * @param device whether the batches are on the device (allocates a stream and pinned memory)
     */
    public HostReadback(long maxColumnBytes, boolean device) {
        this.stream = device ? CudaStream.create() : null;
        this.back = device ? PinnedBuffer.allocate(Math.max(1, maxColumnBytes)) : null;
    }

    /**
     * Makes the reader's stream wait for the batch (device paths).
     *
     * @param b the batch
     */
    public void await(Batch b) {
        if (stream != null) {
            b.awaitOn(stream);
        }
    }

    /**
     * @param v a column of a batch passed to {@link #await}
     * @return its bytes in host memory, valid until the next call
     */
    public MemorySegment bytes(ColumnView v) {
        if (!v.onDevice()) {
            return v.hostSegment();
        }
        stream.copyToHost(back, 0, v.deviceBuffer().orElseThrow(), v.deviceOffset(), v.bytes());
        stream.synchronize();
        return back.segment().asSlice(0, v.bytes());
    }

    /**
     * Releases the batch after the reader's copies.
     *
     * @param b the batch
     */
    public void release(Batch b) {
        if (stream != null) {
            b.release(stream);
        } else {
            b.close();
        }
    }

    @Override
    public void close() {
        if (stream != null) {
            stream.synchronize();
            stream.close();
            back.close();
        }
    }
}
