package dev.gdsloader.loader.spi;

import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import java.lang.foreign.MemorySegment;

/**
 * The memory one batch lands in, as the ring and the batch's views see it. Each I/O engine defines its own
 * slot-memory class (what it reads into, stages in and copies with) implementing this; the ring holds one per
 * entry and never looks past this interface.
 *
 * <p>A slot's views live in exactly one of {@link #device()} (device paths) or {@link #hostTarget()} (host
 * memory); the other is null. Owned by the ring that allocated it through its engine; {@link #close()} frees
 * everything it holds, once, after all I/O into it has stopped. Handed to one batch at a time; the methods are
 * called by the loader's reader thread and the consumer, ordered by the ring's queues.
 */
public interface SlotMemory extends AutoCloseable {
    /** @return the device memory the views point into ({@link SlotLayout#targetBytes()} bytes), or null */
    DeviceBuffer device();

    /** @return the host memory the views are slices of ({@link SlotLayout#targetBytes()} bytes), or null */
    MemorySegment hostTarget();

    /** @return the event recorded after a batch's last copy into device memory, or null where there is none */
    CudaEvent ready();

    /**
     * Marks the slot released on the consumer's stream, so that it is refilled only after the consumer's queued
     * work on it has run. Does nothing where the slot is in host memory.
     *
     * @param consumerStream the consumer's stream
     */
    void releaseOn(CudaStream consumerStream);

    /**
     * Called before the slot is refilled, on the I/O pool thread that then issues the refill: returns once nothing
     * the refill writes can still be in use. By default it blocks until the consumer's release event (if any) and the
     * slot's own last copies (staging must not be overwritten under an in-flight copy) have completed; an engine
     * whose every write into the slot is ordered on the slot's stream may instead order the refill after the release
     * on the device and block only for the slot's own previous batch (MAPPED).
     */
    void awaitReusable();

    /**
     * Waits for every copy already enqueued for the slot (after a failed batch, whose ready event was never
     * recorded); does nothing where copies are synchronous.
     */
    void quiesce();

    /**
     * Frees everything the slot holds, once; later calls do nothing.
     *
     * @throws IllegalStateException naming the slot if a free fails (the rest is still freed)
     */
    @Override
    void close();
}
