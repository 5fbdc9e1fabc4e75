package dev.gdsloader.loader.io;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.posix.PosixFile;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.slot.ComposedSlot;
import dev.gdsloader.loader.slot.DeviceTarget;
import dev.gdsloader.loader.slot.HostTarget;
import dev.gdsloader.loader.slot.SlotAllocation;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.loader.slot.SlotResources;
import dev.gdsloader.posix.AlignedMemory;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The bounce path: {@code pread} ({@code O_DIRECT} or buffered, see {@link DirectIoPolicy}) into pinned host
 * memory, then {@code cudaMemcpyAsync} to the device on the slot's stream ({@link StagedReads} says how each
 * piece moves).
 *
 * <p>Columns of large records go with one copy per read as soon as it is done, so copies overlap the remaining
 * reads. Columns of small records (under {@link #PACK_BELOW} bytes each) would need one copy per record under a
 * shuffle, and every copy call has a fixed cost (on the H200 machine, 64 KiB pinned copies reach 14 GB/s against
 * 55 GB/s for large ones: {@code ../shared/gpu/README.md}): their bytes are packed on the host into a pinned image
 * of the column's view (buffered reads land there directly) and the column goes to the device in one copy when
 * the batch's reads are done.
 *
 * <p>{@link #onHost} runs the same planning, packing and copy offsets over plain host memory standing in for
 * pinned and device memory (a {@link HostCopy}), so that CI without a GPU checks them byte for byte.
 * Thread-safe; owns its open files.
 */
public final class BounceEngine implements IoEngine<BounceEngine.BounceSlot> {
    /** Records smaller than this many bytes are packed on the host and copied once per column and batch. */
    public static final long PACK_BELOW = 64 << 10;

    private final StagedReads reads;
    private final boolean onDevice;

    private BounceEngine(Dataset dataset, EngineConfig config, boolean onDevice) {
        this.reads = new StagedReads(dataset, config);
        this.onDevice = onDevice;
    }

    /**
     * @param dataset the dataset
     * @param config the settings
     */
    public BounceEngine(Dataset dataset, EngineConfig config) {
        this(dataset, config, true);
    }

    /**
     * A bounce engine over host memory: plain host memory stands in for the pinned staging, the packed images and
     * the device memory, and the copy step is a host copy; batches land in {@link SlotMemory#hostTarget()}.
     * Needs no GPU (CI tests of the bounce path's offsets).
     *
     * @param dataset the dataset
     * @param config the settings
     * @return the engine, owned by the caller
     */
    public static BounceEngine onHost(Dataset dataset, EngineConfig config) {
        return new BounceEngine(dataset, config, false);
    }

    @Override
    public PathTaken pathTaken() {
        return PathTaken.BOUNCE;
    }

    @Override
    public BounceSlot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        long packing = packingBytes(reads.dataset(), layout);
        return SlotAllocation.build(a -> onDevice ? BounceSlot.onDevice(layout, packing, a, allocator)
                : BounceSlot.onHost(layout, packing, a, allocator));
    }

    @Override
    public SlotLoad newLoad(int index, BounceSlot s, SlotLayout layout, int[] maxPieces) {
        return reads.newLoad(index, s, layout, maxPieces, packedAt(reads.dataset(), layout), false);
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
        // pinned staging plus the pinned image the small-record columns are packed into (plus the stand-in target)
        return layout.stagingBytes() + packingBytes(reads.dataset(), layout) + (onDevice ? 0 : layout.targetBytes());
    }

    @Override
    public long ioNanos() {
        return reads.ioNanos();
    }

    @Override
    public void close() {
        reads.close();
    }

    /**
     * Pinned packing memory one slot needs besides its staging memory: the target regions of the columns whose
     * records are under {@link #PACK_BELOW} bytes.
     *
     * @param dataset the dataset
     * @param layout the slot layout of that dataset
     * @return bytes of the packed image per slot; 0 where no column is packed
     */
    public static long packingBytes(Dataset dataset, SlotLayout layout) {
        long total = 0;
        for (int c = 0; c < dataset.columns().size(); c++) {
            if (dataset.columns().get(c).recordBytes() < PACK_BELOW) {
                total += layout.targetRegion(c);
            }
        }
        return total;
    }

    /** @return per column, the offset of its packed image in a slot's packed memory, or -1 where it is not packed */
    static long[] packedAt(Dataset dataset, SlotLayout layout) {
        int n = dataset.columns().size();
        long[] at = new long[n];
        long next = 0;
        for (int c = 0; c < n; c++) {
            at[c] = -1;
            if (dataset.columns().get(c).recordBytes() < PACK_BELOW) {
                at[c] = next;
                next += layout.targetRegion(c);
            }
        }
        return at;
    }

    /**
     * A bounce slot: its target (device memory with stream and events, or host memory standing in), staging and
     * packed image (pinned, or plain host memory standing in) and the copy step between them. Owned by its ring
     * entry; {@link #close()} frees everything once, newest first.
     */
    static final class BounceSlot implements StagedMemory, ComposedSlot {
        private final SlotMemory target;
        private final MemorySegment staging;
        private final MemorySegment packed;
        private final CopyStep copy;
        private final SlotResources resources;

        private BounceSlot(SlotMemory target, AutoCloseable stagingOwner, MemorySegment staging,
                           AutoCloseable packedOwner, MemorySegment packed, CopyStep copy) {
            this.target = target;
            this.staging = staging;
            this.packed = packed;
            this.copy = copy;
            this.resources = new SlotResources("bounce slot", target, packedOwner, stagingOwner);
        }

        static BounceSlot onDevice(SlotLayout layout, long packing, SlotAllocation a, NativeAllocator allocator) {
            DeviceTarget t = a.add(DeviceTarget.allocate(layout.targetBytes(), allocator));
            PinnedBuffer s = a.add(PinnedBuffer.allocate(layout.stagingBytes(), allocator));
            PinnedBuffer p = packing > 0 ? a.add(PinnedBuffer.allocate(packing, allocator)) : null;
            return new BounceSlot(t, s, s.segment(), p, p == null ? null : p.segment(), new DeviceCopy(t, s, p));
        }

        static BounceSlot onHost(SlotLayout layout, long packing, SlotAllocation a, NativeAllocator allocator) {
            HostTarget t = a.add(HostTarget.allocate(layout.targetBytes(), allocator));
            AlignedMemory s = a.add(new AlignedMemory(layout.stagingBytes(), PosixFile.DIRECT_ALIGNMENT, allocator));
            AlignedMemory p = packing > 0 ? a.add(new AlignedMemory(packing, PosixFile.DIRECT_ALIGNMENT, allocator)) : null;
            return new BounceSlot(t, s, s.segment(), p, p == null ? null : p.segment(), new HostCopy(t.hostTarget()));
        }

        @Override
        public SlotMemory target() {
            return target;
        }

        @Override
        public MemorySegment staging() {
            return staging;
        }

        @Override
        public MemorySegment packed() {
            return packed;
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

    /** Serves {@code BOUNCE}: any machine with a GPU. */
    public static final class Provider implements EngineProvider {
        /** A provider; {@link java.util.ServiceLoader} makes one from {@code META-INF/services}. */
        public Provider() {
        }

        @Override
        public ReadPath path() {
            return ReadPath.BOUNCE;
        }

        @Override
        public int preference() {
            return 200;
        }

        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            if (!Cuda.availability().available()) {
                return Verdict.no((requested ? "BOUNCE path needs a GPU: " : "no GPU path: ") + Cuda.availability().reason());
            }
            return Verdict.yes(requested ? "" : "reads go through pinned staging memory, then copies to the GPU");
        }

        @Override
        public BounceEngine open(Dataset dataset, EngineConfig config, Verdict verdict) {
            return new BounceEngine(dataset, config);
        }
    }
}
