package dev.gdsloader.loader.io;

import dev.gdsloader.posix.PosixFile;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.slot.ComposedSlot;
import dev.gdsloader.loader.slot.HostTarget;
import dev.gdsloader.loader.slot.SlotAllocation;
import dev.gdsloader.loader.slot.SlotLayout;
import dev.gdsloader.loader.slot.SlotMemory;
import dev.gdsloader.loader.slot.SlotResources;
import dev.gdsloader.posix.AlignedMemory;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The host path, for machines without a GPU: buffered {@code pread} of each piece's exact bytes straight into
 * its place in the host column view; with {@code O_DIRECT}, the piece's aligned cover into host staging memory,
 * then a host copy into the view ({@link StagedReads}). Thread-safe; owns its open files.
 */
public final class HostEngine implements IoEngine {
    private final StagedReads reads;
    private final boolean direct;

    /**
     * @param dataset the dataset
     * @param config the settings
     */
    public HostEngine(Dataset dataset, EngineConfig config) {
        this.reads = new StagedReads(dataset, config);
        this.direct = config.direct();
    }

    @Override
    public String pathTaken() {
        return "HOST";
    }

    @Override
    public SlotMemory allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        // buffered reads land in the view directly: staging only where O_DIRECT may be used
        return SlotAllocation.build(a -> new HostSlot(a.add(HostTarget.allocate(layout.targetBytes(), allocator)),
                direct ? a.add(new AlignedMemory(layout.stagingBytes(), PosixFile.DIRECT_ALIGNMENT, allocator)) : null));
    }

    @Override
    public SlotLoad newLoad(int index, SlotMemory slot, SlotLayout layout, int[] maxPieces) {
        if (!(slot instanceof HostSlot s)) {
            throw new IllegalArgumentException("slot " + index + " was not made by the host engine: " + slot);
        }
        long[] none = new long[layout.targetOffsets().length];
        java.util.Arrays.fill(none, -1);
        return reads.newLoad(index, s, layout, maxPieces, none, true);
    }

    @Override
    public int maxOps(SlotLayout layout, int[] maxPieces) {
        return IoEngine.maxReads(layout, maxPieces, reads.maxIo());
    }

    @Override
    public long viewOffset(SlotLayout layout, ColumnPieces column) {
        return layout.targetOffsets()[column.column()];
    }

    @Override
    public long hostBytesPerSlot(SlotLayout layout) {
        return layout.targetBytes() + (direct ? layout.stagingBytes() : 0);
    }

    @Override
    public long ioNanos() {
        return reads.ioNanos();
    }

    @Override
    public void close() {
        reads.close();
    }

    /** A host slot: the view memory and, for {@code O_DIRECT}, staging. Freed once by {@link #close()}. */
    static final class HostSlot implements StagedMemory, ComposedSlot {
        private final HostTarget target;
        private final AlignedMemory staging;
        private final CopyStep copy;
        private final SlotResources resources;

        HostSlot(HostTarget target, AlignedMemory staging) {
            this.target = target;
            this.staging = staging;
            this.copy = new HostCopy(target.hostTarget());
            this.resources = new SlotResources("host slot", staging, target);
        }

        @Override
        public SlotMemory target() {
            return target;
        }

        @Override
        public MemorySegment staging() {
            return staging == null ? null : staging.segment();
        }

        @Override
        public CopyStep copy() {
            return copy;
        }

        @Override
        public void close() {
            resources.close();
        }
    }

    /** Serves {@code HOST}: every machine. */
    static final class Provider implements EngineProvider {
        @Override
        public String path() {
            return "HOST";
        }

        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            return Verdict.yes(requested ? "" : "host memory only");
        }

        @Override
        public IoEngine open(Dataset dataset, EngineConfig config, Verdict verdict) {
            return new HostEngine(dataset, config);
        }
    }
}
