package dev.gdsloader.loader.io;

import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;

/**
 * The bounce path: {@code O_DIRECT pread} into the slot's pinned staging memory, then
 * {@code cudaMemcpyAsync} of each chunk on the slot's stream as soon as it is read, so copies overlap the
 * remaining reads of the batch and of the next batches.
 */
public final class BounceEngine extends StagedEngine {
    /**
     * @param dataset the dataset
     * @param maxIo largest single read, bytes (multiple of 4 KiB)
     * @param direct whether to open shards with {@code O_DIRECT} (falls back per file where refused)
     */
    public BounceEngine(Dataset dataset, long maxIo, boolean direct) {
        super(dataset, maxIo, direct);
    }

    @Override
    public PathTaken pathTaken() {
        return PathTaken.BOUNCE;
    }

    @Override
    protected Slot allocateSlot(int index, SlotLayout layout) {
        return Slot.assemble(index, layout, b -> b.withDevice().withPinnedStaging());
    }

    @Override
    protected void copy(Slot slot, long from, long to, long bytes) {
        slot.stream().copyToDevice(slot.device(), to, slot.pinned(), from, bytes);
    }

    @Override
    protected void finish(Slot slot) {
        slot.ready().record(slot.stream());
    }
}
