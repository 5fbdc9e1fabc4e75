package dev.gdsloader.loader;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.io.DirectIoPolicy;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.io.GdsEngine;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.posix.ShardOpener;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * The loader: reads a sharded dataset batch by batch into a ring of prefetch-depth slots in GPU memory
 * (or host memory on the host path), overlapping storage reads, host-to-device copies and the consumer.
 *
 * <pre>{@code
 * try (GdsLoader loader = GdsLoader.builder(Path.of("data/train"))
 *         .batchSize(256)          // records per batch
 *         .path(ReadPath.AUTO)     // GDS with true GPUDirect, else bounce, else host
 *         .prefetchDepth(4)        // slots in the ring
 *         .build();
 *      CudaStream stream = CudaStream.create()) {
 *     for (Batch batch : loader) {               // one epoch per iteration
 *         batch.awaitOn(stream);                 // no host sync
 *         long images = batch.column("images").devicePointer(); // uint8 [256, 28, 28]
 *         // ... enqueue kernels on stream ...
 *         batch.release(stream);                 // slot reused after the kernels ran
 *     }
 * }
 * }</pre>
 *
 * <p>Each call of {@link #iterator()} runs one epoch; one epoch at a time. The loader owns its slots
 * (device, pinned and host memory, streams, events), its I/O threads and its open files; {@link #close()}
 * stops I/O within a bounded time and frees them once. Its memory comes from a child {@link NativeAllocator} of
 * {@link Builder#allocator} (default: the process root, whose host budget is half of the host's memory), named
 * after the loader and limited by {@link Builder#memoryLimit}; a ring that does not fit the budget is refused at
 * build, naming the budget and who holds the rest; {@link #stats()} shows what is outstanding, and
 * {@link #close()} closes the child, throwing if anything it handed out is still outstanding. Not thread-safe:
 * one consumer thread.
 */
public final class GdsLoader implements Iterable<Batch>, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(GdsLoader.class.getName());
    /** Most slots a ring may have ({@link LoaderOptions#MAX_PREFETCH_DEPTH}). */
    public static final int MAX_PREFETCH_DEPTH = LoaderOptions.MAX_PREFETCH_DEPTH;
    /** Most I/O threads ({@link LoaderOptions#MAX_IO_THREADS}). */
    public static final int MAX_IO_THREADS = LoaderOptions.MAX_IO_THREADS;
    /** Largest single read, bytes (1 GiB, {@link LoaderOptions#MAX_IO_BYTES}). */
    public static final long MAX_IO_BYTES = LoaderOptions.MAX_IO_BYTES;
    /** Records per batch when the builder is given none (256, {@link LoaderOptions#DEFAULT_BATCH_SIZE}). */
    public static final int DEFAULT_BATCH_SIZE = LoaderOptions.DEFAULT_BATCH_SIZE;

    private final Dataset dataset;
    private final LoaderOptions options;
    private final Sampler sampler;
    private final int batchesPerEpoch;
    private final IoEngine<?> engine;
    private final PathTaken taken; // the engine's path
    private final String pathReason;
    /** Where reads run: {@link #ownPool}, or the caller's executor ({@link Builder#ioExecutor}). */
    private final Executor pool;
    /** The loader's own I/O threads, or null when it runs on the caller's executor (or the constructor failed first). */
    private final ThreadPoolExecutor ownPool;
    private final NativeAllocator allocator;
    private final List<Integer> group; // the device group, options.device() first; one GPU for a plain loader
    private final FanOutPlan fanOutPlan;
    private GroupSlots groupSlots; // the other members' slots (device paths, groups of two or more)
    private GroupEpoch groupEpoch;
    private PrefetchRing ring;
    private EpochPipeline epoch;
    private LoaderStats lastStats;
    private long nextEpoch;
    private long resumeBatches;
    private boolean closed;

    /**
     * Starts a builder for the dataset in {@code datasetDir} (a directory of {@code .npy} shards).
     *
     * @param datasetDir directory or single shard
     * @return a builder with defaults: path AUTO, device 0, prefetch depth 4, 4 I/O threads, 8 MiB reads,
     *     O_DIRECT on, sequential order, rank 0 of 1, keep last batch, all columns; batch size must be set
     */
    public static Builder builder(Path datasetDir) {
        return new Builder(datasetDir, null);
    }

    /**
     * @param dataset an opened dataset
     * @return a builder with the same defaults as {@link #builder(Path)}
     */
    public static Builder builder(Dataset dataset) {
        return new Builder(null, dataset);
    }

    private static final AtomicInteger LOADERS = new AtomicInteger();

    private GdsLoader(Dataset dataset, LoaderOptions options, LoaderState resume, String ioReason, NativeAllocator parent,
                      long memoryLimit, List<Integer> group, String placement, ShardOpener files, Executor ioExecutor)
            throws IOException {
        this.group = group == null ? List.of(options.device()) : group;
        this.dataset = dataset.select(options.columns());
        this.options = options;
        long[] shardRecords = this.dataset.columns().get(0).shards().stream().mapToLong(RecordLayout::recordCount).toArray();
        this.sampler = new Sampler(options.sampler(), shardRecords, options.batchSize());
        this.batchesPerEpoch = ReadPlanner.batches((int) sampler.recordsOf(options.sampler().rank()), options.batchSize(),
                options.sampler().dropLast());
        if (resume != null) {
            checkResumable(resume);
            this.nextEpoch = resume.epoch();
            this.resumeBatches = resume.batchesConsumed();
        }
        if (options.path() != ReadPath.HOST && Cuda.availability().available()) {
            CudaDevice.makeCurrent(options.device());
        }
        // the allocator first: the MAPPED path charges its registered shards to it when its engine opens
        this.allocator = parent.newChild("loader #" + LOADERS.incrementAndGet() + " of " + this.dataset.root(), memoryLimit,
                memoryLimit);
        PathSelector.Selection sel;
        try {
            sel = PathSelector.select(options.path(), this.dataset,
                    new EngineConfig(options.maxIoBytes(), options.directIo(), options.gdsThresholdBytes(), allocator, files, 0));
        } catch (IOException | RuntimeException | Error e) {
            allocator.close();
            throw e;
        }
        this.engine = sel.engine();
        this.taken = engine.pathTaken();
        // the O_DIRECT choice matters to the staged paths only: cuFile opens its files itself, MAPPED maps them
        boolean ownFiles = taken == PathTaken.GDS || taken == PathTaken.MAPPED;
        FanOutPlan plan;
        try {
            plan = FanOutPlan.plan(this.group, taken.onDevice(), dev.gdsloader.cuda.CudaPeers::canAccessPeer);
        } catch (RuntimeException | Error e) {
            engine.close();
            allocator.close();
            throw e;
        }
        this.fanOutPlan = plan;
        this.pathReason = (ownFiles ? sel.reason() : sel.reason() + "; " + ioReason) + (placement == null ? "" : "; " + placement)
                + (this.group.size() > 1 ? "; " + plan.reason() : "");
        if (options.path() == ReadPath.AUTO) {
            LOG.info(() -> "gdsloader path " + pathReason); // the one line saying why AUTO chose this path
        } else {
            LOG.fine(() -> "gdsloader path " + pathReason);
        }
        List<dev.gdsloader.loader.dataset.Column> cols = this.dataset.columns();
        // a batch never holds more than this rank's records of an epoch: slots, pieces and the queue are sized by that
        int slotRecords = (int) Math.max(1, Math.min(options.batchSize(), sampler.recordsOf(options.sampler().rank())));
        int[] maxPieces = new int[cols.size()];
        for (int c = 0; c < maxPieces.length; c++) {
            maxPieces[c] = sampler.maxPiecesPerBatch(slotRecords, cols.get(c).shards().size());
        }
        SlotLayout layout = SlotLayout.forBatch(cols, slotRecords, c -> maxPieces[c]);
        // a queue that holds every task of every slot (and each slot's planning parts), so submitting never blocks,
        // rejects or allocates
        int queue = Math.max(16, options.prefetchDepth() * (engine.maxOps(layout, maxPieces) + SlotLoad.MAX_PLANNING_PARTS));
        this.ownPool = ioExecutor != null ? null : IoThreads.pool(options.ioThreads(), queue, options.device(), taken.onDevice());
        this.pool = ownPool != null ? ownPool : IoThreads.onDevice(ioExecutor, options.device(), taken.onDevice());
        try {
            RingBudget.check(allocator, engine.hostBytesPerSlot(layout), taken.onDevice() ? layout.targetBytes() : 0,
                    options.prefetchDepth(), taken);
            ring = PrefetchRing.allocate(engine, cols, layout, maxPieces, options.prefetchDepth(), allocator);
            if (this.group.size() > 1 && taken.onDevice()) {
                groupSlots = GroupSlots.allocate(plan, ring.size(), cols, layout.targetBytes(), allocator);
            }
        } catch (IOException | RuntimeException | Error e) {
            close(); // frees the engine's files (the ring frees what it had made itself)
            throw e;
        }
    }

    /** @return the dataset, restricted to the selected columns */
    public Dataset dataset() {
        return dataset;
    }

    /**
     * @return the options in force: those built with, the block size and the {@code O_DIRECT} choice resolved
     *     ({@link LoaderOptions#directIo()} is never null here)
     */
    public LoaderOptions options() {
        return options;
    }

    /** @return the path batches take */
    public PathTaken pathTaken() {
        return taken;
    }

    /** @return one line: the path and why it was chosen */
    public String pathReason() {
        return pathReason;
    }

    /** @return slots in the ring: the prefetch depth asked for, or fewer if pinned host memory ran out */
    public int slots() {
        return ring.size();
    }

    /** @return batches per epoch on this rank */
    public int batchesPerEpoch() {
        return batchesPerEpoch;
    }

    /** @return the sampler that orders each epoch */
    public Sampler sampler() {
        return sampler;
    }

    /**
     * Where the consumer is: the epoch in progress and how many of its batches the consumer has received
     * (not how many were prefetched). A loader built with {@link Builder#resumeFrom(LoaderState)} from it
     * continues with the next batch.
     *
     * @return the state
     */
    public LoaderState state() {
        long e;
        long consumed;
        if (epoch == null) {
            e = nextEpoch;
            consumed = resumeBatches;
        } else if (epoch.delivered() >= batchesPerEpoch) {
            e = epoch.order().epoch() + 1;
            consumed = 0;
        } else {
            e = epoch.order().epoch();
            consumed = epoch.delivered();
        }
        return new LoaderState(e, consumed, sampler.datasetRecords(), options.batchSize(), options.sampler());
    }

    private void checkResumable(LoaderState s) {
        LoaderState now = new LoaderState(s.epoch(), s.batchesConsumed(), sampler.datasetRecords(), options.batchSize(),
                options.sampler());
        if (!now.equals(s)) {
            throw new IllegalArgumentException("saved state " + s.toJson() + " does not match this loader "
                    + now.toJson() + ": records, batch size and sampler settings must be the same to resume");
        }
        if (s.epoch() < 0 || s.batchesConsumed() < 0 || s.batchesConsumed() > batchesPerEpoch) {
            throw new IllegalArgumentException("saved state " + s.toJson() + " points outside the " + batchesPerEpoch
                    + " batches of an epoch");
        }
    }

    /**
     * Starts an epoch. An epoch the consumer left early (breaking out of its loop) is stopped first, as
     * PyTorch's DataLoader does when a new iterator is made; the new epoch is the next one.
     *
     * <p>The iterator's {@code hasNext()} and {@code next()} wait for the next batch's reads. A consumer may hold up to
     * {@link #slots()} batches at once; one that holds every slot and asks for another waits up to the I/O timeout
     * ({@link Builder#ioTimeoutMillis}) for a release (from another thread), then gets an {@link AllSlotsHeldException}
     * naming the prefetch depth and the batches it holds; after a release it may ask again. At the epoch's end it gets
     * the end at once, whatever it holds.
     *
     * @return an iterator over the epoch's batches, in order
     * @throws IllegalStateException if the loader is closed, the previous epoch still has batches the
     *     consumer has not released (naming how many), or the loader serves a device group of two or more GPUs
     *     (consumed through {@link #groupEpoch()}), or the epoch to start is {@link Long#MAX_VALUE} (resumed from such a
     *     state: no epoch could follow it), naming it
     * @throws java.io.UncheckedIOException on the MAPPED path, if a registered shard changed (size, modification
     *     time or identity), naming it
     */
    @Override
    public Iterator<Batch> iterator() {
        if (group.size() > 1) {
            throw new IllegalStateException("a device group of " + group.size() + " GPUs " + group
                    + " is consumed through groupEpoch().member(m), one consumer per member");
        }
        if (groupEpoch != null) {
            drainGroup();
        }
        return startEpoch();
    }

    /**
     * Starts an epoch for the device group ({@link Builder#deviceGroup}): each batch is read once, into the first GPU's
     * slot, and every member receives it in the same order ({@link GroupEpoch#member(int)}). A group of one is a plain
     * loader's epoch. The previous epoch is ended as {@link #iterator()} ends it; batches pulled for a member that never
     * took them are released.
     *
     * @return the group's epoch, owned by the loader
     * @throws IllegalStateException if the loader is closed, or a member still holds a batch of the previous epoch
     *     (naming the batches and members)
     */
    public GroupEpoch groupEpoch() {
        if (closed) {
            throw new IllegalStateException("loader is closed");
        }
        if (groupEpoch != null) {
            drainGroup();
        }
        EpochPipeline pipe = startEpoch();
        groupEpoch = new GroupEpoch(pipe, ring, fanOutPlan, groupSlots, this::stats);
        return groupEpoch;
    }

    private void drainGroup() {
        List<String> held = groupEpoch.drain();
        if (!held.isEmpty()) {
            throw new IllegalStateException("device group members still hold batches of the previous epoch (" + String.join("; ",
                    held) + "): release them before starting another epoch");
        }
        groupEpoch = null;
    }

    /** @return the device group: its CUDA ordinals, the GPU read into first (a plain loader: its one device) */
    public List<Integer> deviceGroup() {
        return group;
    }

    private EpochPipeline startEpoch() {
        if (closed) {
            throw new IllegalStateException("loader is closed");
        }
        if (epoch != null) {
            // a finished epoch, or one the consumer left early (a break out of its loop): stop it, once every
            // batch it handed out is back, since a new epoch refills every slot
            int held = epoch.outstanding();
            if (held > 0) {
                throw new IllegalStateException("epoch " + epoch.order().epoch() + " still has " + held
                        + " unreleased batch(es): release them before starting another epoch");
            }
            lastStats = epoch.stats();
            if (!epoch.stop(10_000)) {
                throw new IllegalStateException("reads of epoch " + epoch.order().epoch() + " are still blocked after 10 s");
            }
        }
        try {
            engine.checkEpoch(); // MAPPED: no registered shard changed
        } catch (IOException x) {
            throw new java.io.UncheckedIOException(x.getMessage(), x);
        }
        if (nextEpoch == Long.MAX_VALUE) { // its state would name the epoch after it, which a long cannot hold
            throw new IllegalStateException("epoch " + nextEpoch + " cannot be started: no epoch can follow it (epochs are 0.."
                    + (Long.MAX_VALUE - 1) + ")");
        }
        long e = nextEpoch++;
        long skip = resumeBatches;
        resumeBatches = 0;
        epoch = new EpochPipeline(dataset, sampler.order(e), options.batchSize(), skip, batchesPerEpoch, ring, pool,
                TimeUnit.MILLISECONDS.toNanos(options.ioTimeoutMillis()), groupSlots == null ? null : groupSlots::awaitReusable);
        return epoch;
    }

    /**
     * @return counters of the current (or last) epoch, with the native memory this loader holds now
     *     ({@link LoaderStats#memory()}: device, pinned, host and registered bytes outstanding in its allocator) and
     *     the time its build spent registering shard files ({@link LoaderStats#registrationNanos()}, MAPPED)
     */
    public LoaderStats stats() {
        LoaderStats s = epoch != null ? epoch.stats() : lastStats != null ? lastStats
                : new LoaderStats(pathTaken(), 0, 0, 0, 0, 0, 0, 0);
        return s.withMemory(allocator.usage()).withRegistrationNanos(engine.registrationNanos());
    }

    /**
     * @return this loader's allocator: a child of {@link Builder#allocator}'s (default the root), owned and closed
     *     by the loader; read its {@link NativeAllocator#usage()} or make no allocations of your own from it
     */
    public NativeAllocator allocator() {
        return allocator;
    }

    /**
     * Stops I/O (waiting at most 10 s for reads in flight) and frees every slot, thread and file, once.
     * If reads are still blocked after that, their memory is deliberately not freed (a late read into freed
     * memory would corrupt the process); a warning says so.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (groupEpoch != null) {
            List<String> held = groupEpoch.close();
            if (!held.isEmpty()) {
                LOG.warning("gdsloader: closed while device group members still hold batches: " + String.join("; ", held));
            }
        }
        boolean stopped = epoch == null || epoch.stop(10_000);
        try {
            if (ownPool != null) { // null on the caller's executor, whose tasks of this loader the ring's quiesce awaited
                ownPool.shutdownNow();
                stopped &= ownPool.awaitTermination(stopped ? 10 : 1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = false;
        }
        if (!stopped) {
            LOG.warning("gdsloader: reads still blocked at close; their slots are left allocated rather than freed under I/O");
            return;
        }
        try {
            if (groupSlots != null) {
                groupSlots.close();
            }
        } finally {
            try {
                if (ring != null) {
                    ring.close();
                }
            } finally {
                engine.close();
            }
        }
        if (allocator != null) {
            allocator.close(); // throws, listing it, if any memory of the slots is still outstanding
        }
    }

    /**
     * Builds a {@link GdsLoader}: a mutable front over one {@link LoaderOptions}, each setter replacing it with a
     * checked copy (so an invalid value throws at the setter, naming the option). Not thread-safe.
     */
    public static final class Builder {
        private final Path dir;
        private final Dataset dataset;
        private LoaderOptions options = LoaderOptions.defaults();
        private LoaderState resume;
        private NativeAllocator allocator = NativeAllocator.root();
        private long memoryLimit = NativeAllocator.UNLIMITED;
        private List<Integer> group;
        private boolean nearData;
        private ShardOpener files = ShardOpener.byPath();
        private Executor ioExecutor;

        private Builder(Path dir, Dataset dataset) {
            this.dir = dir;
            this.dataset = dataset;
        }

        /**
         * Replaces every option at once, e.g. with options read by {@link LoaderOptions#fromJson(String)}; setters
         * called afterwards change single fields of them.
         *
         * @param options the options
         * @return this
         */
        public Builder options(LoaderOptions options) {
            this.options = java.util.Objects.requireNonNull(options, "options");
            return this;
        }

        /** @return the options set so far (batch size 0 if not set yet) */
        public LoaderOptions options() {
            return options;
        }

        /**
         * Records per batch. A batch never holds more than the records this rank gets per epoch, so the loader sizes
         * its slots (host, pinned and device memory), its bound on pieces per batch and its I/O queue by
         * {@code min(records, records of this rank per epoch)}: a batch size larger than the dataset costs the
         * dataset's memory, not the batch's. The requested value is kept as given in {@link GdsLoader#options()},
         * the sampler (its default block size) and saved {@link LoaderState}s, so states stay resumable.
         *
         * @param records records per batch, &gt; 0
         * @return this
         * @throws IllegalArgumentException if not positive (not calling this at all leaves the batch size unset, and
         *     {@link #build()} takes {@link GdsLoader#DEFAULT_BATCH_SIZE})
         */
        public Builder batchSize(int records) {
            options = options.withBatchSize(LoaderOptions.requirePositiveBatchSize(records));
            return this;
        }

        /**
         * @param path requested path
         * @return this
         */
        public Builder path(ReadPath path) {
            options = options.withPath(path);
            return this;
        }

        /**
         * @param ordinal CUDA device ordinal, &ge; 0
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder device(int ordinal) {
            options = options.withDevice(ordinal);
            return this;
        }

        /**
         * A device group (a tensor-parallel group of one node): every batch is read from storage once, into the first
         * GPU's slot, and copied to each other GPU's slot (peer copy where {@code cudaDeviceCanAccessPeer} allows it both
         * ways, else through pinned host memory; {@link GdsLoader#pathReason()} says which and why), each copy with its
         * own ready event; every member receives the same records in the same order through
         * {@link GdsLoader#groupEpoch()}, and a slot is refilled only after every member released it. Storage reads per
         * epoch stay those of one loader ({@link LoaderStats#storageBytes()}). Ranks compose: {@link #ranks} splits
         * records across groups, a group shares them. On the host path the members share the one host slot. Sets
         * {@link #device} to the first ordinal. Not part of {@link LoaderOptions} (and so not of the service's
         * {@code OPEN}): a builder setting, like {@link #allocator}.
         *
         * @param ordinals CUDA ordinals, distinct, 1..64 of them; the first is read into; one ordinal is a plain loader
         * @return this
         * @throws IllegalArgumentException if empty, too many, negative or repeated (at build: an ordinal past the
         *     visible GPUs)
         */
        public Builder deviceGroup(int... ordinals) {
            List<Integer> g = FanOutPlan.checkGroup(ordinals);
            options = options.withDevice(g.get(0));
            this.group = g;
            return this;
        }

        /**
         * {@code AUTO} device choice: at build, of the visible GPUs the one nearest the block device holding the dataset
         * by PCI path class ({@link dev.gdsloader.loader.topology.DevicePlacement}: same PCIe switch before the host
         * bridge, before another NUMA node; ties to the lowest ordinal), said in {@link GdsLoader#pathReason()}. Replaces
         * {@link #device}; on the host path, or without CUDA, it does nothing.
         *
         * @param on whether to place the loader by topology
         * @return this
         */
        public Builder deviceNearData(boolean on) {
            this.nearData = on;
            return this;
        }

        /**
         * @param slots slots in the prefetch ring, 1..64 (1: no overlap, a baseline)
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder prefetchDepth(int slots) {
            options = options.withPrefetchDepth(slots);
            return this;
        }

        /**
         * @param threads threads issuing reads, 1..256
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder ioThreads(int threads) {
            options = options.withIoThreads(threads);
            return this;
        }

        /**
         * Runs this loader's reads on the caller's executor instead of {@link #ioThreads} threads of its own (e.g. one
         * pool shared by every loader of a server, so that its thread count does not depend on what each loader was
         * asked for); {@link LoaderOptions#ioThreads()} is then kept in the options but starts no thread. The loader
         * never shuts the executor down: {@link GdsLoader#close()} waits (up to 10 s, as for its own threads) until its
         * reads queued or running there are done. The executor must accept every task while the loader is open (an
         * unbounded queue); the loader's tasks never wait on each other, so any number of loaders may share a pool of
         * any size. On a device path each task first makes the loader's device current on the
         * thread that runs it.
         *
         * @param executor where reads run, owned by the caller (who shuts it down after closing the loader); null for the
         *     loader's own threads (the default)
         * @return this
         */
        public Builder ioExecutor(Executor executor) {
            this.ioExecutor = executor;
            return this;
        }

        /**
         * @param bytes largest single read, a multiple of 4096 up to 1 GiB
         * @return this
         * @throws IllegalArgumentException if not such a multiple
         */
        public Builder maxIoBytes(long bytes) {
            options = options.withMaxIoBytes(bytes);
            return this;
        }

        /**
         * @param drop give every rank {@code floor(N / worldSize)} records and drop a short last batch
         * @return this
         */
        public Builder dropLast(boolean drop) {
            options = options.withSampler(options.sampler().withDropLast(drop));
            return this;
        }

        /**
         * @param shuffle how records are ordered each epoch
         * @param seed seed of the shuffle; the order is a function of (seed, epoch, rank, world size)
         * @return this
         */
        public Builder shuffle(Shuffle shuffle, long seed) {
            options = options.withSampler(options.sampler().withShuffle(shuffle, seed));
            return this;
        }

        /**
         * @param records block size of {@link Shuffle#SHARD_BLOCKS}, &ge; 1 (default, or 0: the batch size)
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder blockRecords(int records) {
            options = options.withSampler(options.sampler().withBlockRecords(records));
            return this;
        }

        /**
         * @param rank this process's rank
         * @param worldSize number of ranks
         * @param partition how records split when N does not divide by the world size
         * @return this
         * @throws IllegalArgumentException naming {@code rank} or {@code worldSize} if out of range
         */
        public Builder ranks(int rank, int worldSize, Partition partition) {
            options = options.withSampler(options.sampler().withRanks(rank, worldSize, partition));
            return this;
        }

        /**
         * Takes rank and world size from {@code RANK} and {@code WORLD_SIZE} (absent: rank 0 of 1).
         *
         * @param partition how records split when N does not divide by the world size
         * @return this
         * @throws IllegalArgumentException if a variable is not an integer
         */
        public Builder ranksFromEnvironment(Partition partition) {
            SamplerOptions s = options.sampler().withRankFrom(System.getenv());
            return ranks(s.rank(), s.worldSize(), partition);
        }

        /**
         * @param millis how long the consumer waits for one batch's reads before the epoch fails (default 60 s)
         * @return this
         * @throws IllegalArgumentException if not positive
         */
        public Builder ioTimeoutMillis(long millis) {
            options = options.withIoTimeoutMillis(millis);
            return this;
        }

        /**
         * On the GDS path, pieces (runs of consecutive records of one shard) smaller than this go through pinned
         * staging and one copy per run instead of {@code cuFileRead}, as kvikio's {@code gds_threshold}. Without this
         * call: the environment variable {@value GdsEngine#THRESHOLD_ENV} (bytes), else 1 MiB.
         * {@link GdsLoader#pathReason()} states the threshold in force.
         *
         * @param bytes the threshold, &ge; 0; 0 sends every piece through cuFile
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder gdsThresholdBytes(long bytes) {
            options = options.withGdsThresholdBytes(bytes);
            return this;
        }

        /**
         * @param state a state saved by {@link GdsLoader#state()}; the loader continues with the next batch. Its
         *     batch size and sampler settings must equal the options' (checked by {@link #build()})
         * @return this
         */
        public Builder resumeFrom(LoaderState state) {
            this.resume = state;
            return this;
        }

        /**
         * Whether the staged paths (bounce, host) read with {@code O_DIRECT}. Without this call the loader decides
         * ({@link dev.gdsloader.loader.io.DirectIoPolicy}): {@code O_DIRECT} for a dataset larger than half of
         * host memory, buffered reads otherwise; {@link GdsLoader#pathReason()} says which and why.
         *
         * @param direct whether staged paths use {@code O_DIRECT}
         * @return this
         */
        public Builder directIo(boolean direct) {
            options = options.withDirectIo(direct);
            return this;
        }

        /**
         * The allocator this loader's memory comes from: the loader makes a child of it, named after the loader,
         * and closes the child in {@link GdsLoader#close()}. Use a service session's or a test's allocator to bound
         * several loaders together.
         *
         * @param parent the parent allocator (default: {@link NativeAllocator#root()}), owned by the caller, who
         *     closes it after the loader
         * @return this
         */
        public Builder allocator(NativeAllocator parent) {
            this.allocator = java.util.Objects.requireNonNull(parent, "allocator");
            return this;
        }

        /**
         * Limits this loader's own allocator: at most {@code bytes} of host memory (pinned and plain) and at most
         * {@code bytes} of device memory; the parent's budgets apply as well.
         *
         * @param bytes the limit of each budget, bytes, &ge; 0 (default {@link NativeAllocator#UNLIMITED}: only the
         *     parent's budgets)
         * @return this
         */
        public Builder memoryLimit(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("memoryLimit must be >= 0 bytes, got " + bytes);
            }
            this.memoryLimit = bytes;
            return this;
        }

        /**
         * Sets how shard files are opened: by path (the default), or, as a prefetch server does,
         * {@link dev.gdsloader.posix.CheckedFiles}: beneath a root without following links, each the file checked when
         * the dataset was planned (a refused file fails the batch that reads it, naming the file). The MAPPED path,
         * which maps shards by path, is not offered then.
         *
         * @param opener the opener, used by the loader's I/O threads (thread-safe); not owned
         * @return this
         */
        public Builder files(ShardOpener opener) {
            this.files = java.util.Objects.requireNonNull(opener, "opener");
            return this;
        }

        /**
         * @param names columns to load (all when none are given)
         * @return this
         */
        public Builder columns(String... names) {
            options = options.withColumns(List.of(names));
            return this;
        }

        /**
         * Opens the dataset, picks the path, allocates the slots and starts the I/O threads.
         *
         * @return the loader, owned by the caller
         * @throws IOException if the dataset cannot be read (naming file and offset) or GDS was requested
         *     and a shard cannot be registered
         * @throws IllegalArgumentException on invalid options (a saved state that does not match)
         * @throws dev.gdsloader.memory.MissingJvmFlagException if the JVM lacks
         *     {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (Arrow Java's memory needs it: checked first)
         * @throws dev.gdsloader.memory.MemoryBudgetException if the ring does not fit the allocator's budget or an
         *     ancestor's (naming the budget, the request and who holds the rest)
         * @throws IllegalStateException if the requested path is not possible here (with the reason)
         * @throws dev.gdsloader.cuda.CudaException if device or pinned memory cannot be allocated
         */
        public GdsLoader build() throws IOException {
            dev.gdsloader.memory.GdsLogging.init(); // WARNING unless -Dgdsloader.log raises it
            dev.gdsloader.memory.JvmFlags.requireArrowMemoryAccess("the loader (Arrow Java reads its Arrow shards)");
            LoaderOptions o = (options.batchSize() == 0 ? options.withBatchSize(DEFAULT_BATCH_SIZE) : options).requireBatchSize();
            if (o.sampler().blockRecords() == 0) {
                o = o.withSampler(o.sampler().withBlockRecords(o.batchSize()));
            }
            Dataset d = dataset != null ? dataset : Dataset.open(dir, o.columns()); // unselected columns are never opened
            DirectIoPolicy.Choice io = DirectIoPolicy.choose(o.directIo(),
                    (o.columns().isEmpty() ? d : d.select(o.columns())).dataBytes(), DirectIoPolicy.hostMemoryBytes());
            long threshold = o.gdsThresholdBytes() != null ? o.gdsThresholdBytes()
                    : GdsEngine.thresholdFromEnvironment(System.getenv());
            boolean gpu = o.path() != ReadPath.HOST && Cuda.availability().available();
            String placement = null;
            if (nearData && gpu) {
                if (group != null && group.size() > 1) {
                    throw new IllegalArgumentException("deviceNearData picks one GPU; a deviceGroup " + group
                            + " names its GPUs itself (put the one nearest the data first)");
                }
                dev.gdsloader.loader.topology.DevicePlacement.Choice c = Placement.nearData(d.root());
                o = o.withDevice(c.ordinal());
                placement = "device " + c.reason();
            }
            if (group != null && gpu) {
                int visible = Cuda.availability().deviceCount();
                for (int g : group) {
                    if (g >= visible) {
                        throw new IllegalArgumentException("deviceGroup " + group + " names GPU " + g + ", but " + visible
                                + " GPU(s) are visible");
                    }
                }
            }
            return new GdsLoader(d, o.withDirectIo(io.direct()).withGdsThresholdBytes(threshold), resume, io.reason(),
                    allocator, memoryLimit, group, placement, files, ioExecutor);
        }
    }
}
