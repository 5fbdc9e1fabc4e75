package dev.gdsloader.loader.io;

import java.lang.foreign.MemorySegment;

/**
 * The copy from host memory into a slot's target, behind one interface so that the bounce path's planning,
 * packing and copy offsets run the same over device memory ({@link DeviceCopy}: {@code cudaMemcpyAsync} on the
 * slot's stream) and over host memory standing in for it ({@link HostCopy}: CI without a GPU).
 *
 * <p>Thread-safe: pool threads copy disjoint ranges of one batch concurrently. Owned by its slot memory.
 */
public interface CopyStep {
    /**
     * Copies (or enqueues the copy of) {@code bytes} from {@code src} at {@code srcOffset} to the slot's target at
     * {@code targetOffset}. The source must stay untouched until {@link #finish()}'s readiness has been reached.
     *
     * @param src host memory this step copies from: the slot's staging or packed image
     * @param srcOffset byte offset in {@code src}
     * @param targetOffset byte offset in the slot's target memory
     * @param bytes bytes, &ge; 0
     * @throws IndexOutOfBoundsException if a range falls outside its memory
     * @throws IllegalArgumentException if {@code src} is not memory of this step's slot
     */
    void copy(MemorySegment src, long srcOffset, long targetOffset, long bytes);

    /** After a batch's last copy: records the slot's ready event where copies are asynchronous. */
    void finish();
}
