package dev.gdsloader.loader.slot;

import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.posix.PosixFile;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.posix.AlignedMemory;
import java.lang.foreign.MemorySegment;

/**
 * The host half of a slot whose views are in host memory: {@link SlotLayout#targetBytes()} bytes of 4 KiB
 * aligned host memory. Copies into it are synchronous, so there is no stream and no event. Engines compose it
 * into their slot-memory classes (the host path; the bounce path standing in host memory for device memory).
 *
 * <p>Owned by the slot that made it; {@link #close()} frees it once.
 */
public final class HostTarget implements SlotMemory {
    private final AlignedMemory memory;

    private HostTarget(AlignedMemory memory) {
        this.memory = memory;
    }

    /**
     * @param bytes host bytes, &gt; 0
     * @param allocator the allocator the host memory is charged to (as {@code HOST})
     * @return the target, owned by the caller
     * @throws OutOfMemoryError if the host has no memory for it
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's host budget refuses it
     */
    public static HostTarget allocate(long bytes, NativeAllocator allocator) {
        return new HostTarget(new AlignedMemory(bytes, PosixFile.DIRECT_ALIGNMENT, allocator));
    }

    @Override
    public DeviceBuffer device() {
        return null;
    }

    @Override
    public MemorySegment hostTarget() {
        return memory.segment();
    }

    @Override
    public CudaEvent ready() {
        return null;
    }

    @Override
    public void releaseOn(CudaStream consumerStream) {
        // host memory: the consumer's release is immediate
    }

    @Override
    public void awaitReusable() {
        // host copies are complete when a batch's reads are
    }

    @Override
    public void quiesce() {
        // no asynchronous copies
    }

    @Override
    public void close() {
        memory.close();
    }
}
