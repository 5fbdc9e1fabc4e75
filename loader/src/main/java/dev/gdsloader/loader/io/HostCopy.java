package dev.gdsloader.loader.io;

import java.lang.foreign.MemorySegment;

/**
 * {@link CopyStep} into host memory: a synchronous {@code MemorySegment.copy}. Used where host memory stands in
 * for device memory (the bounce path on a machine without a GPU, in CI) and by the host path. Thread-safe for
 * disjoint ranges.
 *
 * @param target the slot's target memory
 */
public record HostCopy(MemorySegment target) implements CopyStep {
    @Override
    public void copy(MemorySegment src, long srcOffset, long targetOffset, long bytes) {
        MemorySegment.copy(src, srcOffset, target, targetOffset, bytes);
    }

    @Override
    public void finish() {
        // copies are complete when copy() returns
    }
}
