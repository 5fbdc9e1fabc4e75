package dev.gdsloader.loader.io;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLoad;
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
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.loader.slot.SlotResources;
import dev.gdsloader.posix.AlignedMemory;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The host path, for machines without a GPU: buffered {@code pread} of each piece's exact bytes straight into
 * its place in the host column view; with {@code O_DIRECT}, the piece's aligned cover into host staging memory,
 * then a host copy into the view ({@link StagedReads}). Thread-safe; owns its open files.
 */
public final class HostEngine implements IoEngine<HostEngine.HostSlot> {
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
    public PathTaken pathTaken() {
        return PathTaken.HOST;
    }

    @Override
    public HostSlot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        // buffered reads land in the view directly: staging only where O_DIRECT may be used
        return SlotAllocation.build(a -> new HostSlot(a.add(HostTarget.allocate(layout.targetBytes(), allocator)),
                direct ? a.add(new AlignedMemory(layout.stagingBytes(), PosixFile.DIRECT_ALIGNMENT, allocator)) : null));
    }

    @Override
    public SlotLoad newLoad(int index, HostSlot s, SlotLayout layout, int[] maxPieces) {
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
    public static final class Provider implements EngineProvider {
        /** A provider; {@link java.util.ServiceLoader} makes one from {@code META-INF/services}. */
        public Provider() {
        }

        @Override
        public ReadPath path() {
            return ReadPath.HOST;
        }

        @Override
        public int preference() {
            return 100;
        }

        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            return Verdict.yes(requested ? "" : "host memory only");
        }

        @Override
        public HostEngine open(Dataset dataset, EngineConfig config, Verdict verdict) {
            return new HostEngine(dataset, config);
        }
    }
}
