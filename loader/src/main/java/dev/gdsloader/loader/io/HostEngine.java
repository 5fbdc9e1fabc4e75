package dev.gdsloader.loader.io;

import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.MemorySegment;

/**
 * The host path, for machines without a GPU: {@code O_DIRECT pread} into aligned host staging memory,
 * then a host copy into the contiguous column view.
 */
public final class HostEngine extends StagedEngine {
    /**
     * @param dataset the dataset
     * @param maxIo largest single read, bytes (multiple of 4 KiB)
     * @param direct whether to open shards with {@code O_DIRECT}
     */
    public HostEngine(Dataset dataset, long maxIo, boolean direct) {
        super(dataset, maxIo, direct);
    }

    @Override
    public PathTaken pathTaken() {
        return PathTaken.HOST;
    }

    @Override
    protected Slot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        return Slot.assemble(index, layout, allocator, b -> b.withHostMemory());
    }

    @Override
    protected void copy(Slot slot, int column, long from, long to, long bytes) {
        MemorySegment.copy(slot.staging(), from, slot.hostTarget(), to, bytes);
    }

    @Override
    protected void finish(Slot slot) {
        // host copies are complete when run() returns
    }
}
