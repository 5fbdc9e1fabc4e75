package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.MemorySegment;

/**
 * Brings batch columns back to the host (to check them, or to send them on): device columns are copied into a
 * pinned buffer on the reader's own stream after it waited for the batch's ready event; host columns are returned
 * as they are. The pinned buffer grows to the largest column asked for. Owns its stream and pinned buffer; not
 * thread-safe.
 */
public final class HostReadback implements AutoCloseable {
    private final CudaStream stream;
    private final NativeAllocator allocator;
    private PinnedBuffer back;

    /**
     * Takes its pinned memory from the process root allocator.
     *
     * @param maxColumnBytes the largest column view it is expected to copy, bytes (larger ones grow the buffer)
     * @param device whether the batches are on the device (allocates a stream and pinned memory)
     * @throws dev.gdsloader.cuda.CudaException if the stream or the pinned memory cannot be allocated
     */
    public HostReadback(long maxColumnBytes, boolean device) {
        this(maxColumnBytes, device, NativeAllocator.root());
    }

    /**
     * @param maxColumnBytes the largest column view it is expected to copy, bytes (larger ones grow the buffer)
     * @param device whether the batches are on the device (allocates a stream and pinned memory)
     * @param allocator the allocator its pinned memory is charged to
     * @throws dev.gdsloader.cuda.CudaException if the stream or the pinned memory cannot be allocated
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's budget refuses the pinned memory
     */
    public HostReadback(long maxColumnBytes, boolean device, NativeAllocator allocator) {
        this.allocator = allocator;
        this.stream = device ? CudaStream.create() : null;
        this.back = device ? PinnedBuffer.allocate(Math.max(1, maxColumnBytes), allocator) : null;
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
     * @throws dev.gdsloader.cuda.CudaException if a larger pinned buffer cannot be allocated or the copy fails
     */
    public MemorySegment bytes(ColumnView v) {
        if (!v.onDevice()) {
            return v.hostSegment();
        }
        if (v.bytes() > back.size()) { // the previous copy was waited for: the old buffer is idle
            back.close();
            back = PinnedBuffer.allocate(v.bytes(), allocator);
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
