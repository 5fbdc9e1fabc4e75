package dev.gdsloader.loader.io;

import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The bounce path: {@code O_DIRECT pread} (or a buffered one, see {@link DirectIoPolicy}) into the slot's pinned
 * staging memory, then to the device.
 *
 * <p>Columns of large records go with one {@code cudaMemcpyAsync} per chunk on the slot's stream as soon as the
 * chunk is read, so copies overlap the remaining reads. Columns of small records (under {@link #PACK_BELOW}
 * bytes each) would need one copy per record under a shuffle, and every copy call has a fixed cost (on the H200
 * machine, 64 KiB pinned copies reach 14 GB/s against 55 GB/s for large ones: {@code ../shared/gpu/README.md}):
 * their bytes are packed on the host into a pinned image of the column's view, and the column goes to the
 * device in one copy when the batch's reads are done.
 */
public final class BounceEngine extends StagedEngine {
    /** Records smaller than this many bytes are packed on the host and copied once per column and batch. */
    public static final long PACK_BELOW = 64 << 10;

    /*
     * Written once, by the first allocateSlot (under IoEngine.newSlot's lock, in GdsLoader's constructor), read by
     * I/O threads in copy and finish. The happens-before edge is the hand-off of each batch: the constructor's
     * thread -> Thread.start of the pipeline's reader thread -> pool.execute of the chunk tasks (and the engine is
     * reached through GdsLoader's final field). No slot is loaded before newSlot has returned.
     */
    /** Per column: offset of its packed image in {@link Slot#packed()}, or -1 where chunks are copied directly. */
    private long[] packedAt;
    /** Per column: bytes of its packed image (its target region). */
    private long[] packedBytes;

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
    protected Slot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        if (packedAt == null) { // every slot of a loader has the same layout
            planPacking(layout);
        }
        long total = Arrays.stream(packedBytes).sum();
        return Slot.assemble(index, layout, allocator, b -> b.withDevice().withPinnedStaging().withPinnedPacking(total));
    }

    /**
     * Pinned packing memory one slot needs besides its staging memory: the target regions of the columns whose
     * records are under {@link #PACK_BELOW} bytes.
     *
     * @param dataset the dataset
     * @param layout the slot layout of that dataset
     * @return bytes of {@link Slot#packed()} per slot; 0 where no column is packed
     */
    public static long packingBytes(Dataset dataset, SlotLayout layout) {
        long total = 0;
        int n = dataset.columns().size();
        for (int c = 0; c < n; c++) {
            if (dataset.columns().get(c).recordBytes() < PACK_BELOW) {
                long end = c + 1 < n ? layout.targetOffsets()[c + 1] : layout.targetBytes();
                total += end - layout.targetOffsets()[c];
            }
        }
        return total;
    }

    private void planPacking(SlotLayout layout) {
        int n = dataset.columns().size();
        long[] at = new long[n];
        long[] bytes = new long[n];
        long next = 0;
        for (int c = 0; c < n; c++) {
            at[c] = -1;
            if (dataset.columns().get(c).recordBytes() < PACK_BELOW) {
                long end = c + 1 < n ? layout.targetOffsets()[c + 1] : layout.targetBytes();
                at[c] = next;
                bytes[c] = end - layout.targetOffsets()[c];
                next += bytes[c];
            }
        }
        packedBytes = bytes;
        packedAt = at;
    }

    @Override
    protected void copy(Slot slot, int column, long from, long to, long bytes) {
        long at = packedAt[column];
        if (at < 0) {
            slot.stream().copyToDevice(slot.device(), to, slot.pinned(), from, bytes);
        } else {
            MemorySegment.copy(slot.pinned().segment(), from, slot.packed().segment(),
                    at + (to - slot.layout().targetOffsets()[column]), bytes);
        }
    }

    @Override
    protected void finish(Slot slot) {
        for (int c = 0; c < packedAt.length; c++) {
            if (packedAt[c] >= 0) {
                slot.stream().copyToDevice(slot.device(), slot.layout().targetOffsets()[c], slot.packed(), packedAt[c],
                        packedBytes[c]);
            }
        }
        slot.ready().record(slot.stream());
    }
}
