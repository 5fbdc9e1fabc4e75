package dev.gdsloader.loader.io;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.HostRegistration;
import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.gather.GatherKernel;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
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
import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.MemoryUsage;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The MAPPED path, zero copy from the page cache: every shard file is mapped read-only ({@code MAP_SHARED}) and
 * registered for the GPU (read-only, mapped, portable: {@link MappedShards}, shared by the loaders of the process),
 * when the engine opens; a batch is then moved by the GPU alone, on the slot's stream: pieces of at least
 * {@link MappedPlan#COPY_FROM} bytes by one {@code cudaMemcpyAsync} each from the registered address, smaller pieces
 * (shuffled records) by one {@link GatherKernel} launch per column that reads them from mapped host memory into
 * their place in the column view (by record, one source address each, or by {@code {src, dst, length}} entry: see
 * {@link MappedPlan}; staged through a pinned buffer of the slot and uploaded on a second stream, beside the
 * previous batch's gather, which the gather then waits for on the device). No
 * reader thread work, no staging of data, no CPU copy: a batch is one pool task that issues the copies and launches.
 *
 * <p>Host-decoded shards (compressed Arrow bodies, deflated {@code .npz} members: {@link HostDecodedRecords}) cannot
 * be read by the GPU as stored: they are neither mapped nor registered nor charged to the budget; their pieces go
 * through pinned staging as on the bounce path ({@link StagedReads} over those shards only: decoded on the host into
 * the slot's pinned staging, one {@code cudaMemcpyAsync} per read into the same column view on the slot's stream,
 * ordered before the batch's ready event), as further pool tasks of the batch. {@link SlotLoad#stagedBytes()} says
 * how many bytes of a batch went that way. A dataset without such shards has none of this: no staging memory, no
 * per-piece check.
 *
 * <p>Registering faults every page in (from disk where cold), so opening the engine reads the dataset once, on up
 * to {@link #REGISTER_THREADS} threads with {@code madvise(WILLNEED)} ahead of each registration; epochs then run at
 * the link's speed. Each loader charges the files it holds to its allocator ({@link MemoryKind#HOST_REGISTERED},
 * each file once); a dataset over the host budget is refused before anything is mapped. A registered shard must
 * not change: {@link #checkEpoch()} compares size, modification time and identity at each epoch start. Java code
 * never reads a mapping. Thread-safe; {@link #close()} gives the registrations back (the last holder unregisters,
 * then unmaps).
 */
public final class MappedEngine implements IoEngine<MappedEngine.MappedSlot> {
    /** Most threads registering shards when the engine opens. */
    static final int REGISTER_THREADS = 4;
    private final Dataset dataset;
    private final int device;
    private final MappedShards.Lease[][] leases;
    private final List<MappedShards.Lease> held = new ArrayList<>();
    private final List<NativeAllocator.Allocation> charges = new ArrayList<>();
    private final long registrationNanos;
    /** Per column and shard: true where the shard is host-decoded (staged); null where no shard is. */
    private final boolean[][] staged;
    /** Host-decoded shard runs, staged. */
    private final int stagedRuns;
    /** The staged reads of the host-decoded shards; null where there are none. */
    private final StagedReads reads;
    private final AtomicLong ioNanos = new AtomicLong();
    private final AtomicLong deviceNanos = new AtomicLong();
    private final AtomicLong deviceBatches = new AtomicLong();
    private GatherKernel kernel; // guarded by this
    /** The one stream every slot's work is issued on (made with the first slot), or null; guarded by this. */
    private CudaStream stream;
    /** The stream the slots' gather entries are uploaded on, beside the previous batch's gather; guarded by this. */
    private CudaStream upload;
    private boolean closed; // guarded by this

    /**
     * Maps and registers every file that holds a mappable shard of {@code dataset} (each file once), charging each to
     * the config's host budget; host-decoded shards are staged instead (their files are registered only where they
     * also hold a mappable shard).
     *
     * @param dataset the dataset
     * @param config the settings: the allocator the registrations are charged to ({@link EngineConfig#hostBudget()}),
     *     and the largest staged read of a host-decoded shard ({@link EngineConfig#maxIo()})
     * @param registry the registry of mapped shards ({@link MappedShards#process()}; a registry without CUDA in tests)
     * @param device the GPU the registering threads make current, or -1 for none (a registry without CUDA)
     * @throws IOException naming the file if one cannot be stat'ed, mapped or registered (nothing is then held)
     * @throws MemoryBudgetException if the files do not fit the allocator's host budget (nothing is then held)
     */
    MappedEngine(Dataset dataset, EngineConfig config, MappedShards registry, int device) throws IOException {
        this.dataset = dataset;
        this.device = device;
        this.staged = stagedShards(dataset);
        this.stagedRuns = stagedRuns(dataset);
        this.reads = staged == null ? null : new StagedReads(dataset, config, staged);
        NativeAllocator allocator = config.hostBudget();
        Map<Path, Long> files = files(dataset);
        try {
            for (Map.Entry<Path, Long> f : files.entrySet()) {
                charges.add(allocator.reserve(MemoryKind.HOST_REGISTERED, f.getValue(),
                        "mapping of " + f.getKey() + " registered for the MAPPED path"));
            }
            this.registrationNanos = registerAll(registry, new ArrayList<>(files.keySet()));
            for (MappedShards.Lease l : held) {
                long opened = files.get(l.file());
                if (l.size() != opened) {
                    throw new IOException(l.file() + ": " + l.size() + " bytes when registered for the MAPPED path, "
                            + opened + " when the dataset was opened: a shard must not change while it is loaded");
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            close();
            throw e;
        }
        Map<Path, MappedShards.Lease> byFile = new LinkedHashMap<>();
        for (MappedShards.Lease l : held) {
            byFile.put(l.file(), l);
        }
        this.leases = new MappedShards.Lease[dataset.columns().size()][];
        for (int c = 0; c < leases.length; c++) {
            List<RecordLayout> shards = dataset.columns().get(c).shards();
            leases[c] = new MappedShards.Lease[shards.size()];
            for (int s = 0; s < shards.size(); s++) {
                leases[c][s] = byFile.get(shards.get(s).file().toAbsolutePath().normalize());
            }
        }
    }

    /**
     * @return every distinct file (absolute, normalised) holding a mappable shard, with its size, in dataset order:
     *     the files MAPPED registers and charges (a host-decoded shard's file only where a mappable one shares it)
     */
    static Map<Path, Long> files(Dataset dataset) {
        Map<Path, Long> files = new LinkedHashMap<>();
        for (var col : dataset.columns()) {
            for (RecordLayout s : col.shards()) {
                if (!(s instanceof HostDecodedRecords)) {
                    files.putIfAbsent(s.file().toAbsolutePath().normalize(), s.fileSize());
                }
            }
        }
        return files;
    }

    /** @return per column and shard, true where the shard is host-decoded; null where none is */
    static boolean[][] stagedShards(Dataset dataset) {
        if (stagedRuns(dataset) == 0) {
            return null;
        }
        boolean[][] staged = new boolean[dataset.columns().size()][];
        for (int c = 0; c < staged.length; c++) {
            List<RecordLayout> shards = dataset.columns().get(c).shards();
            staged[c] = new boolean[shards.size()];
            for (int s = 0; s < shards.size(); s++) {
                staged[c][s] = shards.get(s) instanceof HostDecodedRecords;
            }
        }
        return staged;
    }

    /** @return host-decoded shard runs of the dataset (all columns), which MAPPED stages */
    static int stagedRuns(Dataset dataset) {
        return (int) dataset.columns().stream().flatMap(c -> c.shards().stream())
                .filter(HostDecodedRecords.class::isInstance).count();
    }

    /** Acquires a lease on every file, on up to {@link #REGISTER_THREADS} threads; @return nanoseconds spent, wall. */
    private long registerAll(MappedShards registry, List<Path> files) throws IOException {
        long t0 = System.nanoTime();
        int threads = Math.min(REGISTER_THREADS, files.size());
        if (threads <= 1) {
            for (Path f : files) {
                held.add(registry.acquire(f));
            }
            return System.nanoTime() - t0;
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> Thread.ofPlatform().daemon()
                .name("gdsloader-register").unstarted(() -> {
                    if (device >= 0) {
                        CudaDevice.makeCurrent(device);
                    }
                    r.run();
                }));
        try {
            List<Future<MappedShards.Lease>> fs = new ArrayList<>();
            for (Path f : files) {
                fs.add(pool.submit(() -> registry.acquire(f)));
            }
            Throwable first = null;
            for (Future<MappedShards.Lease> f : fs) {
                try {
                    held.add(f.get());
                } catch (ExecutionException e) {
                    first = first == null ? e.getCause() : first;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    first = first == null ? new IOException("interrupted while registering shards", e) : first;
                }
            }
            if (first instanceof IOException io) {
                throw io;
            }
            if (first instanceof RuntimeException re) {
                throw re;
            }
            if (first instanceof Error err) {
                throw err;
            }
            if (first != null) {
                throw new IOException(first);
            }
            return System.nanoTime() - t0;
        } finally {
            pool.shutdown();
        }
    }

    @Override
    public PathTaken pathTaken() {
        return PathTaken.MAPPED;
    }

    /** @return wall nanoseconds the engine's open spent mapping and registering its shards */
    @Override
    public long registrationNanos() {
        return registrationNanos;
    }

    /** @return host-decoded shard runs whose pieces this engine moves through pinned staging; 0 for most datasets */
    public int stagedRuns() {
        return stagedRuns;
    }

    /** @return bytes of shard files this engine holds registered (each file once) */
    public long registeredBytes() {
        return held.stream().mapToLong(MappedShards.Lease::size).sum();
    }

    /**
     * Checks that no registered shard changed since it was registered.
     *
     * @throws IOException naming the first changed shard and what changed
     */
    @Override
    public void checkEpoch() throws IOException {
        for (MappedShards.Lease l : held) {
            l.checkUnchanged();
        }
    }

    @Override
    public MappedSlot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        GatherKernel m = kernel();
        long entryBytes = entryBytes(layout);
        return SlotAllocation.build(a -> {
            DeviceTarget t = a.add(DeviceTarget.allocate(layout.targetBytes(), allocator, stream()));
            PinnedBuffer staged = a.add(PinnedBuffer.allocate(entryBytes, allocator));
            DeviceBuffer entries = a.add(DeviceBuffer.allocate(entryBytes, allocator));
            CudaEvent started = a.add(CudaEvent.createTimed());
            CudaEvent ended = a.add(CudaEvent.createTimed());
            CudaEvent uploaded = a.add(CudaEvent.create());
            PinnedBuffer decoded = reads == null ? null : a.add(PinnedBuffer.allocate(layout.stagingBytes(), allocator));
            return new MappedSlot(t, staged, entries, m, started, ended, uploaded, uploadStream(), this::countDeviceTime,
                    decoded);
        });
    }

    /** Loads the gather kernels once per engine, on the current device. */
    private synchronized GatherKernel kernel() {
        checkOpen();
        if (kernel == null) {
            kernel = GatherKernel.load();
        }
        return kernel;
    }

    /**
     * The stream of every slot: batches gather from mapped host memory one after another, as the gather ceiling does,
     * instead of several slots' random reads of the page cache at once.
     */
    private synchronized CudaStream stream() {
        checkOpen();
        if (stream == null) {
            stream = CudaStream.create();
        }
        return stream;
    }

    /** The stream gather entries are uploaded on, so that a batch's upload overlaps the gather before it. */
    private synchronized CudaStream uploadStream() {
        checkOpen();
        if (upload == null) {
            upload = CudaStream.create();
        }
        return upload;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("MAPPED engine is closed");
        }
    }

    private long entryBytes(SlotLayout layout) {
        return 8L * MappedPlan.ENTRY_LONGS * MappedPlan.entryCapacity(dataset, layout);
    }

    @Override
    public SlotLoad newLoad(int index, MappedSlot s, SlotLayout layout, int[] maxPieces) {
        int capacity = maxOps(layout, maxPieces);
        SlotLoad.Work decoded = reads == null ? null : reads.work(s, layout, notPacked(layout), false, capacity);
        return new SlotLoad("slot " + index, capacity, new Ops(s, layout, newPlan(layout), decoded), ioNanos);
    }

    /** @return per column -1: the staged pieces go one copy per read, none packed (MAPPED's ready event follows them) */
    private static long[] notPacked(SlotLayout layout) {
        long[] none = new long[layout.targetOffsets().length];
        java.util.Arrays.fill(none, -1);
        return none;
    }

    /**
     * @param layout the slot layout
     * @return a plan sized for any batch of that layout
     */
    MappedPlan newPlan(SlotLayout layout) {
        int columns = dataset.columns().size();
        long[] recordBytes = dataset.columns().stream().mapToLong(c -> c.recordBytes()).toArray();
        return new MappedPlan(recordBytes, MappedPlan.copyCapacity(layout, columns), MappedPlan.entryCapacity(dataset, layout),
                staged);
    }

    /** @return the addresses of the mapped shards, for planning */
    MappedPlan.Shards shards() {
        return new MappedPlan.Shards() {
            @Override
            public long host(int column, int shard, long fileOffset) {
                return leases[column][shard].hostAddress(fileOffset);
            }

            @Override
            public long device(int column, int shard, long fileOffset) {
                return leases[column][shard].deviceAddress(fileOffset);
            }
        };
    }

    @Override
    public int maxOps(SlotLayout layout, int[] maxPieces) {
        // the issue of a whole batch is one operation; the staged reads of host-decoded pieces follow it
        return 1 + (reads == null ? 0 : IoEngine.maxReads(layout, maxPieces, reads.maxIo()));
    }

    @Override
    public long viewOffset(SlotLayout layout, ColumnPieces column) {
        return layout.targetOffsets()[column.column()];
    }

    @Override
    public long hostBytesPerSlot(SlotLayout layout) {
        // the pinned gather entries (and the staging of host-decoded pieces); the registered shards are charged at open
        return entryBytes(layout) + (reads == null ? 0 : layout.stagingBytes());
    }

    @Override
    public long ioNanos() {
        return ioNanos.get();
    }

    private void countDeviceTime(long nanos) {
        deviceNanos.addAndGet(nanos);
        deviceBatches.incrementAndGet();
    }

    /** @return GPU nanoseconds of the batches counted by {@link #deviceBatches()}: entry upload, copies and gathers */
    @Override
    public long deviceNanos() {
        return deviceNanos.get();
    }

    /** @return batches whose GPU time is counted: each once its slot is refilled or quiesced after it completed */
    @Override
    public long deviceBatches() {
        return deviceBatches.get();
    }

    /** Unloads the kernel and gives every registration and its charge back, once; call after all I/O has stopped. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (CudaStream s : new CudaStream[] {stream, upload}) {
            if (s != null) { // the slots are closed by now (their ring before the engine)
                try {
                    s.synchronize();
                    s.close();
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (kernel != null) {
            try {
                kernel.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        for (MappedShards.Lease l : held) {
            try {
                l.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        held.clear();
        if (reads != null) {
            reads.close();
        }
        charges.forEach(NativeAllocator.Allocation::release);
        charges.clear();
        if (first != null) {
            throw first;
        }
    }

    /**
     * One entry's batches: plan on the pool thread that finished the batch's planning; operation 0 issues copies,
     * entry upload and launches; operations 1.. (host-decoded shards only) are the staged reads, each decoded into
     * the slot's pinned staging and copied on the slot's stream.
     */
    private final class Ops implements SlotLoad.Work {
        private final MappedSlot slot;
        private final SlotLayout layout;
        private final MappedPlan plan;
        private final long[] viewOffsets;
        private final MappedPlan.Shards shards = shards();
        /** The staged reads of the host-decoded pieces, operations 1..; null where the dataset has none. */
        private final SlotLoad.Work decoded;
        private long bytes;

        Ops(MappedSlot slot, SlotLayout layout, MappedPlan plan, SlotLoad.Work decoded) {
            this.slot = slot;
            this.layout = layout;
            this.plan = plan;
            this.viewOffsets = layout.targetOffsets().clone();
            this.decoded = decoded;
        }

        @Override
        public void plan(SlotPlan batch, SlotLoad load) {
            plan.plan(batch, layout, viewOffsets, slot.target.device().address(), shards);
            bytes = batch.bytes() - plan.stagedBytes();
            load.add(bytes);
            if (decoded != null) {
                decoded.plan(batch, load);
            }
        }

        @Override
        public long stagedBytes() {
            return plan.stagedBytes();
        }

        @Override
        public long run(int from, int to) throws IOException {
            long n = from == 0 ? issue() : 0;
            if (decoded != null && Math.max(from, 1) < to) {
                n += decoded.run(Math.max(from, 1), to);
            }
            return n;
        }

        /** Issues the mapped shards' copies and gathers of the batch on the slot's stream; @return their bytes. */
        private long issue() {
            DeviceTarget t = slot.target;
            slot.started.record(t.stream());
            for (int i = 0; i < plan.copies(); i++) {
                t.stream().copyFromHostAddress(t.device(), plan.copyTarget(i), plan.copySource(i), plan.copyBytes(i));
            }
            int used = plan.usedLongs();
            if (used > 0) {
                // the host saw this slot's previous batch complete (awaitReusable): its entries are free to rewrite
                MemorySegment.copy(plan.entries(), 0, slot.staged.segment(), ValueLayout.JAVA_LONG, 0, used);
                slot.upload.copyToDevice(slot.entries, 0, slot.staged, 0, 8L * used);
                slot.uploaded.record(slot.upload);
                t.stream().waitFor(slot.uploaded);
                long device = t.device().address();
                for (int c = 0; c < dataset.columns().size(); c++) {
                    long first = slot.entries.address() + 8L * plan.columnFirst(c);
                    if (plan.byRecord(c)) {
                        slot.kernel.launchRecords(first, device + viewOffsets[c], dataset.columns().get(c).recordBytes(),
                                plan.columnCount(c), t.stream());
                    } else {
                        slot.kernel.launchEntries(first, plan.columnCount(c), t.stream());
                    }
                }
            }
            return bytes;
        }

        /** Records the ready event after every copy and gather of the batch (the staged copies' too: same stream). */
        @Override
        public void finish() {
            slot.ended.record(slot.target.stream());
            slot.timing = true;
            slot.target.ready().record(slot.target.stream());
        }
    }

    /**
     * A MAPPED slot: device memory with stream and events, and the pinned and device buffers of a batch's gather
     * entries. Every write into the slot's device memory is issued on its stream, so a refill is ordered after the
     * consumer's release on the device; the host waits only for the slot's own previous batch (its entries' pinned
     * buffer is rewritten, and a ring of D slots keeps at most D batches of GPU work queued), after the next batch is
     * planned, on the pool thread. Each batch's GPU time (from before its entry upload to after its last gather,
     * timed events on the stream) is counted once the host has seen the batch complete. Where the dataset has
     * host-decoded shards, the slot also holds pinned staging for their pieces ({@link StagedMemory}: decoded there,
     * copied from there on the slot's stream; rewritten only after the host saw the previous batch complete, as the
     * entries). Freed once by {@link #close()}.
     */
    static final class MappedSlot implements ComposedSlot, StagedMemory {
        private final DeviceTarget target;
        private final PinnedBuffer staged;
        private final DeviceBuffer entries;
        private final GatherKernel kernel;
        private final CudaEvent started;
        private final CudaEvent ended;
        private final CudaEvent uploaded;
        private final CudaStream upload;
        private final java.util.function.LongConsumer deviceTime;
        private final SlotResources resources;
        /** Pinned staging of the host-decoded pieces, or null. */
        private final PinnedBuffer decoded;
        private final CopyStep copy;
        /** A batch was issued and its GPU time not counted yet; written by the issuing and the refilling thread in turn. */
        private volatile boolean timing;

        MappedSlot(DeviceTarget target, PinnedBuffer staged, DeviceBuffer entries, GatherKernel kernel, CudaEvent started,
                   CudaEvent ended, CudaEvent uploaded, CudaStream upload, java.util.function.LongConsumer deviceTime,
                   PinnedBuffer decoded) {
            this.target = target;
            this.staged = staged;
            this.entries = entries;
            this.kernel = kernel;
            this.started = started;
            this.ended = ended;
            this.uploaded = uploaded;
            this.upload = upload;
            this.deviceTime = deviceTime;
            this.decoded = decoded;
            this.copy = decoded == null ? null : new DeviceCopy(target, decoded);
            this.resources = new SlotResources("MAPPED slot", target, entries, staged, started, ended, uploaded, decoded);
        }

        /** @return the pinned staging of host-decoded pieces; null where the dataset has none */
        @Override
        public MemorySegment staging() {
            return decoded == null ? null : decoded.segment();
        }

        /** @return copies from the staging into the slot's device memory on its stream; null where there is no staging */
        @Override
        public CopyStep copy() {
            return copy;
        }

        /** Counts the last batch's GPU time, once; call after the host saw it complete. */
        private void countTime() {
            if (timing) {
                timing = false;
                deviceTime.accept(ended.elapsedNanos(started));
            }
        }

        @Override
        public void quiesce() {
            target.quiesce();
            countTime();
        }

        @Override
        public SlotMemory target() {
            return target;
        }

        @Override
        public void awaitReusable() {
            target.orderAfterRelease();
            target.ready().synchronize();
            countTime();
        }

        @Override
        public void close() {
            resources.close();
        }
    }

    /**
     * Why a dataset does not fit the budget, if it does not.
     *
     * @param files the distinct shard files and their sizes
     * @param budget the allocator the registrations would be charged to
     * @return empty if they fit; else one line naming the dataset's bytes and the budget
     */
    static Optional<String> overBudget(Map<Path, Long> files, NativeAllocator budget) {
        long total = files.values().stream().mapToLong(Long::longValue).sum();
        try {
            budget.checkAvailable(MemoryKind.HOST_REGISTERED, total, "the " + files.size() + " shard file(s) to register");
            return Optional.empty();
        } catch (MemoryBudgetException e) {
            return Optional.of("the dataset's " + files.size() + " shard file(s) (" + total + " bytes, "
                    + MemoryUsage.size(total) + ") do not fit the host budget of '" + e.allocator() + "' (" + e.limit()
                    + " bytes, " + MemoryUsage.size(e.limit()) + "); use a larger budget or the BOUNCE path. "
                    + e.getMessage());
        }
    }

    /**
     * Serves {@code MAPPED}: a GPU that supports read-only host registration and a dataset whose mappable shard files
     * fit the loader's host budget (host-decoded shards are staged, not counted; under AUTO at least one shard must
     * be mappable, else BOUNCE does the same work). Under AUTO it comes first.
     */
    public static final class Provider implements EngineProvider {
        /** A provider; {@link java.util.ServiceLoader} makes one from {@code META-INF/services}. */
        public Provider() {
        }

        @Override
        public ReadPath path() {
            return ReadPath.MAPPED;
        }

        @Override
        public int preference() {
            return 400;
        }

        /** Before any shard is opened ({@code doctor}): the regular files directly in {@code dataDir} count as the shards. */
        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            Map<Path, Long> files = new LinkedHashMap<>();
            try (Stream<Path> s = Files.isDirectory(dataDir) ? Files.list(dataDir) : Stream.of(dataDir)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    if (Files.isRegularFile(p)) {
                        files.put(p, Files.size(p));
                    }
                }
            } catch (IOException e) {
                return Verdict.no("MAPPED: cannot list " + dataDir + ": " + e.getMessage());
            }
            return check(files, 0, config, requested);
        }

        @Override
        public Verdict check(Dataset dataset, EngineConfig config, boolean requested) {
            return check(files(dataset), stagedRuns(dataset), config, requested);
        }

        private static Verdict check(Map<Path, Long> files, int stagedRuns, EngineConfig config, boolean requested) {
            if (!config.files().opensByPath()) { // the registry maps shards by path, shared by the process's loaders
                return Verdict.no("MAPPED path maps shards by path: not offered where files are opened beneath a root"
                        + " as checked (a prefetch server's)");
            }
            if (!Cuda.availability().available()) {
                return Verdict.no((requested ? "MAPPED path needs a GPU: " : "no GPU path: ") + Cuda.availability().reason());
            }
            HostRegistration.Support s = HostRegistration.support(HostRegistration.currentDevice());
            if (!s.readOnlyRegistration()) {
                return Verdict.no((requested ? "MAPPED path unavailable: " : "MAPPED declined: ") + s.reason());
            }
            return verdict(files, stagedRuns, config.hostBudget(), requested, s.reason());
        }

        /**
         * The verdict once the GPU can register read-only: the budget against the mappable files, and the staged runs.
         *
         * @param files the files to register (mappable shards) and their sizes
         * @param stagedRuns host-decoded shard runs, to go through pinned staging
         * @param budget the allocator the registrations would be charged to
         * @param requested true if MAPPED was asked for by name
         * @param support why the GPU can register read-only, e.g. "read-only host registration supported"
         * @return yes, with the staged runs named where there are any; no where the files do not fit, or (AUTO) where
         *     no shard is mappable
         */
        static Verdict verdict(Map<Path, Long> files, int stagedRuns, NativeAllocator budget, boolean requested,
                               String support) {
            String refused = requested ? "MAPPED path refused: " : "MAPPED declined: ";
            Optional<String> over = overBudget(files, budget);
            if (over.isPresent()) {
                return Verdict.no(refused + over.get() + (stagedRuns == 0 ? ""
                        : " (" + runs(stagedRuns) + " not counted: staged, not registered)"));
            }
            if (files.isEmpty() && stagedRuns > 0 && !requested) {
                return Verdict.no(refused + "every shard is host-decoded (" + runs(stagedRuns) + "): nothing to map");
            }
            String staged = stagedRuns == 0 ? "" : runs(stagedRuns) + " decoded on the host and copied through pinned staging";
            if (requested) {
                return Verdict.yes(staged);
            }
            long total = files.values().stream().mapToLong(Long::longValue).sum();
            String what = stagedRuns == 0 ? "the dataset (" + MemoryUsage.size(total) + ") fits"
                    : "the dataset's mappable shards (" + MemoryUsage.size(total) + ") fit";
            return Verdict.yes(what + " the host budget and " + support + ": shards registered, read by the GPU from the page "
                    + "cache" + (staged.isEmpty() ? "" : "; " + staged));
        }

        private static String runs(int n) {
            return n + " host-decoded shard run" + (n == 1 ? "" : "s");
        }

        @Override
        public MappedEngine open(Dataset dataset, EngineConfig config, Verdict verdict) throws IOException {
            return new MappedEngine(dataset, config, MappedShards.process(), HostRegistration.currentDevice());
        }
    }
}
