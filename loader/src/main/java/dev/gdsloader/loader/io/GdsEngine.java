package dev.gdsloader.loader.io;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.cufile.CuFileBufferRegistration;
import dev.gdsloader.cufile.CuFileHandle;
import dev.gdsloader.cufile.CuFileMode;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.slot.ComposedSlot;
import dev.gdsloader.loader.slot.DeviceTarget;
import dev.gdsloader.loader.slot.SlotAllocation;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.loader.slot.SlotResources;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The GDS path: {@code cuFileRead} straight into the slot's device memory (registered with cuFile), for pieces of
 * at least the GDS threshold; smaller pieces (kvikio's {@code gds_threshold} idea: a DMA setup costs more than a
 * small buffered read) are read exactly, buffered, into their place in a pinned image of the slot's views, and
 * each run of consecutive small pieces goes to the device in one copy once the batch's reads are done.
 *
 * <p>Layout: the column region starts 4 KiB aligned; a first piece read by cuFile is read from its 4 KiB-aligned
 * file offset to the region's start, so its DMA is aligned and the view begins {@code headPad} bytes in (when that
 * keeps the view 16-byte aligned; otherwise the first piece is read exactly to the region start); later pieces
 * (a batch that crosses a shard boundary) are read exactly to their place after it, and cuFile handles their
 * misalignment. Reads never overlap, so all of them run in parallel. Thread-safe; owns its open files.
 */
public final class GdsEngine implements IoEngine<GdsEngine.GdsSlot> {
    /** Default GDS threshold, bytes: kvikio's default (1 MiB). */
    public static final long DEFAULT_THRESHOLD = 1 << 20;
    /** Environment variable that sets the GDS threshold in bytes when the builder does not (kvikio: {@code KVIKIO_GDS_THRESHOLD}). */
    public static final String THRESHOLD_ENV = "GDSLOADER_GDS_THRESHOLD";
    /** Device alignment of every column view, bytes: enough for any dtype and for 16-byte vector loads. */
    static final long VIEW_ALIGNMENT = 16;
    private static final byte CUFILE = 0;
    private static final byte STAGED = 1;

    private final Dataset dataset;
    private final long maxIo;
    private final long threshold;
    private final OpenFiles<CuFileHandle> files;
    private final OpenFiles<ShardReader> small;
    private final PathTaken taken;
    private final AtomicLong ioNanos = new AtomicLong();

    /**
     * @param dataset the dataset
     * @param config the settings ({@link EngineConfig#gdsThresholdBytes()} routes small pieces)
     * @param mode what the cuFile probe found (GDS or COMPAT), reported as the path taken
     */
    public GdsEngine(Dataset dataset, EngineConfig config, CuFileMode mode) {
        this.dataset = dataset;
        this.maxIo = config.maxIo();
        this.threshold = config.gdsThresholdBytes();
        this.files = new OpenFiles<>(dataset, shard -> CuFileHandle.register(config.files().open(shard.file(), true)),
                config.openFiles());
        this.small = new OpenFiles<>(dataset, shard -> ShardReader.open(shard, false, config.files()), config.openFiles());
        this.taken = mode == CuFileMode.GDS ? PathTaken.GDS : PathTaken.CUFILE_COMPAT;
    }

    /**
     * The GDS threshold from the environment.
     *
     * @param env the environment (e.g. {@code System.getenv()})
     * @return {@link #THRESHOLD_ENV}'s value in bytes, or {@link #DEFAULT_THRESHOLD} where it is not set
     * @throws IllegalArgumentException naming the variable if its value is not a whole number of bytes &ge; 0
     */
    public static long thresholdFromEnvironment(Map<String, String> env) {
        String v = env.get(THRESHOLD_ENV);
        if (v == null || v.isBlank()) {
            return DEFAULT_THRESHOLD;
        }
        try {
            long t = Long.parseLong(v.strip());
            if (t >= 0) {
                return t;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(THRESHOLD_ENV + " must be a whole number of bytes >= 0 (0: every piece "
                + "through cuFile), got '" + v + "'");
    }

    /**
     * Registers every shard now, so that a file cuFile refuses is found before the first batch.
     *
     * @throws IOException the first registration failure, naming the file and the decoded cause
     */
    public void registerAll() throws IOException {
        for (int c = 0; c < dataset.columns().size(); c++) {
            for (int s = 0; s < dataset.columns().get(c).shards().size(); s++) {
                files.acquire(c, s);
                files.release(c, s);
            }
        }
    }

    @Override
    public PathTaken pathTaken() {
        return taken;
    }

    @Override
    public GdsSlot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) throws IOException {
        return SlotAllocation.build(a -> {
            DeviceTarget t = a.add(DeviceTarget.allocate(layout.targetBytes(), allocator));
            CuFileBufferRegistration r = a.add(CuFileBufferRegistration.register(t.device(), allocator));
            PinnedBuffer image = threshold > 0 ? a.add(PinnedBuffer.allocate(layout.targetBytes(), allocator)) : null;
            return new GdsSlot(t, r, image);
        });
    }

    @Override
    public SlotLoad newLoad(int index, GdsSlot s, SlotLayout layout, int[] maxPieces) {
        int capacity = maxOps(layout, maxPieces);
        return new SlotLoad("slot " + index, capacity, ops(s, layout, capacity), ioNanos);
    }

    @Override
    public int maxOps(SlotLayout layout, int[] maxPieces) {
        return IoEngine.maxReads(layout, maxPieces, maxIo);
    }

    @Override
    public long viewOffset(SlotLayout layout, ColumnPieces column) {
        return layout.targetOffsets()[column.column()] + (alignedHead(column) ? column.headPad() : 0);
    }

    @Override
    public long hostBytesPerSlot(SlotLayout layout) {
        return threshold > 0 ? layout.targetBytes() : 0; // the pinned image small pieces land in
    }

    @Override
    public long ioNanos() {
        return ioNanos.get();
    }

    /**
     * Whether the first piece can be read from its 4 KiB boundary: only if the view then starts at a device
     * address aligned for any element type (16 bytes). A record that starts off that (a safetensors tensor at an
     * odd offset) is read exactly to the aligned region start instead, and cuFile handles the unaligned read.
     */
    private static boolean alignedHead(ColumnPieces column) {
        return column.headPad() % VIEW_ALIGNMENT == 0;
    }

    /**
     * @param length a piece's length, bytes
     * @param threshold the GDS threshold, bytes
     * @return true if the piece is read through pinned staging rather than {@code cuFileRead}
     */
    static boolean staged(long length, long threshold) {
        return length < threshold;
    }

    @Override
    public void close() {
        files.close();
        small.close();
    }

    /**
     * @param slot the entry's memory; null to plan only (tests without a GPU: {@link Ops#run} and {@link Ops#finish}
     *     then cannot be called)
     * @param layout its regions
     * @param capacity most operations per batch
     * @return the entry's operations
     */
    Ops ops(GdsSlot slot, SlotLayout layout, int capacity) {
        return new Ops(slot, layout, capacity, slot == null ? threshold > 0 : slot.image != null);
    }

    /** One entry's operations: cuFile reads, staged small reads and the copy runs of the staged ones. */
    final class Ops implements SlotLoad.Work {
        private final GdsSlot slot;
        private final boolean staging;
        private final SlotLayout layout;
        private final int[] column;
        private final int[] shard;
        private final byte[] route;
        private final long[] fileOffset;
        private final long[] length;
        private final long[] target;
        private final long[] runFrom;
        private final long[] runBytes;
        private int runs;

        private Ops(GdsSlot slot, SlotLayout layout, int capacity, boolean staging) {
            this.slot = slot;
            this.staging = staging;
            this.layout = layout;
            this.column = new int[capacity];
            this.shard = new int[capacity];
            this.route = new byte[capacity];
            this.fileOffset = new long[capacity];
            this.length = new long[capacity];
            this.target = new long[capacity];
            this.runFrom = new long[capacity];
            this.runBytes = new long[capacity];
        }

        @Override
        public void plan(SlotPlan plan, SlotLoad load) {
            runs = 0;
            for (int c = 0; c < plan.columnCount(); c++) {
                ColumnPieces col = plan.column(c);
                long region = layout.targetOffsets()[c];
                long view = viewOffset(layout, col);
                for (int i = 0; i < col.count(); i++) {
                    long len = col.end(i) - col.start(i);
                    if (staging && staged(len, threshold)) {
                        long to = view + col.view(i);
                        add(load, c, col.shard(i), STAGED, col.start(i), len, to);
                        if (runs > 0 && runFrom[runs - 1] + runBytes[runs - 1] == to) {
                            runBytes[runs - 1] += len;
                        } else {
                            runFrom[runs] = to;
                            runBytes[runs++] = len;
                        }
                        continue;
                    }
                    // the first piece is read from its 4 KiB boundary to the region start (aligned DMA); later pieces exactly
                    boolean aligned = i == 0 && alignedHead(col);
                    long start = aligned ? Alignment.down(col.start(i)) : col.start(i);
                    long base = aligned ? region : view + col.view(i);
                    for (long off = start; off < col.end(i); ) {
                        long stop = Math.min(col.end(i), Alignment.down(off) + maxIo);
                        add(load, c, col.shard(i), CUFILE, off, stop - off, base + (off - start));
                        off = stop;
                    }
                }
            }
        }

        private void add(SlotLoad load, int c, int s, byte r, long off, long len, long to) {
            int i = load.add(len);
            column[i] = c;
            shard[i] = s;
            route[i] = r;
            fileOffset[i] = off;
            length[i] = len;
            target[i] = to;
        }

        @Override
        public long run(int from, int to) throws IOException {
            long total = 0;
            for (int i = from; i < to; i++) {
                if (route[i] == STAGED) {
                    ShardReader f = small.acquire(column[i], shard[i]);
                    long n;
                    try {
                        n = f.read(slot.image.segment(), target[i], length[i], fileOffset[i]);
                    } finally {
                        small.release(column[i], shard[i]);
                    }
                    if (n < length[i]) {
                        throw new IOException(f.path() + ": short read: " + n + " of " + length[i] + " bytes at offset "
                                + fileOffset[i] + " (file truncated while loading?)");
                    }
                    total += n;
                } else {
                    CuFileHandle h = files.acquire(column[i], shard[i]);
                    long n;
                    try {
                        n = h.read(slot.target.device(), target[i], length[i], fileOffset[i]);
                    } finally {
                        files.release(column[i], shard[i]);
                    }
                    if (n < length[i]) {
                        throw new IOException(h.path() + ": short read: cuFileRead returned " + n + " of " + length[i]
                                + " bytes at offset " + fileOffset[i] + " (file truncated while loading?)");
                    }
                    total += n;
                }
            }
            return total;
        }

        /**
         * @param i operation index
         * @return {column, file offset, length, device (or image) offset, 1 if staged else 0} of operation {@code i}
         */
        long[] op(int i) {
            return new long[] {column[i], fileOffset[i], length[i], target[i], route[i] == STAGED ? 1 : 0};
        }

        /** @return the copy runs of the staged pieces of the batch planned last, as {offset, bytes} pairs */
        List<long[]> runs() {
            List<long[]> l = new ArrayList<>();
            for (int r = 0; r < runs; r++) {
                l.add(new long[] {runFrom[r], runBytes[r]});
            }
            return l;
        }

        @Override
        public void finish() {
            for (int r = 0; r < runs; r++) {
                slot.copy.copy(slot.image.segment(), runFrom[r], runFrom[r], runBytes[r]);
            }
            slot.copy.finish();
        }
    }

    /**
     * A GDS slot: device memory registered with cuFile, its stream and events, and (with a threshold) the pinned
     * image small pieces land in. Freed once by {@link #close()}: registration first, then memory.
     */
    static final class GdsSlot implements ComposedSlot {
        private final DeviceTarget target;
        private final PinnedBuffer image;
        private final CopyStep copy;
        private final SlotResources resources;

        GdsSlot(DeviceTarget target, CuFileBufferRegistration registration, PinnedBuffer image) {
            this.target = target;
            this.image = image;
            this.copy = new DeviceCopy(target, image);
            this.resources = new SlotResources("GDS slot", registration, target, image);
        }

        @Override
        public SlotMemory target() {
            return target;
        }

        @Override
        public void close() {
            resources.close();
        }
    }

    /**
     * Serves {@code GDS}: a GPU and usable cuFile for the data directory; under AUTO only with true GPUDirect DMA
     * (nvidia-fs): cuFile's compat mode is its own POSIX read through pinned bounce buffers, and on the H200
     * machine the loader's bounce path matched or beat it in every measurement where both read the same way
     * ({@code BENCHMARKS.md}). An explicit request uses cuFile in either mode.
     */
    public static final class Provider implements EngineProvider {
        /** A provider; {@link java.util.ServiceLoader} makes one from {@code META-INF/services}. */
        public Provider() {
        }

        @Override
        public ReadPath path() {
            return ReadPath.GDS;
        }

        @Override
        public int preference() {
            return 300;
        }

        @Override
        public java.util.Optional<String> refusesHostDecoded() {
            return Optional.of("cuFile reads file bytes as stored");
        }

        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            if (!requested && !Cuda.availability().available()) {
                return Verdict.no("no GPU path: " + Cuda.availability().reason());
            }
            CuFileStatus st = CuFileProbe.probe(Optional.of(dataDir));
            String threshold = config.gdsThresholdBytes() == 0 ? "GDS threshold 0: every piece through cuFile"
                    : "GDS threshold " + config.gdsThresholdBytes() + " bytes: smaller pieces through pinned staging";
            if (requested) {
                return st.usable() ? Verdict.yes("cuFile mode " + st.mode() + " (" + st.reason() + "); " + threshold)
                        : Verdict.no("GDS path unavailable: " + st.reason());
            }
            if (!st.usable()) {
                return Verdict.no("cuFile unusable: " + st.reason());
            }
            if (st.mode() == CuFileMode.COMPAT) {
                return Verdict.no("cuFile runs only in compat mode here (" + st.reason() + "), its own bounce through host"
                        + " memory, which the loader's bounce path outruns; request GDS to use cuFile anyway");
            }
            return Verdict.yes("cuFile mode " + st.mode() + " (" + st.reason() + "); " + threshold);
        }

        @Override
        public GdsEngine open(Dataset dataset, EngineConfig config, Verdict verdict) throws IOException {
            // the mode only (check() already registered a probe file in the data directory)
            GdsEngine e = new GdsEngine(dataset, config, CuFileProbe.probe(Optional.empty()).mode());
            try {
                e.registerAll();
            } catch (IOException | RuntimeException ex) {
                e.close();
                throw ex;
            }
            return e;
        }
    }
}
