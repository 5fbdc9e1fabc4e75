package dev.gdsloader.loader;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.io.DirectIoPolicy;
import dev.gdsloader.loader.io.EngineConfig;
import dev.gdsloader.loader.io.GdsEngine;
import dev.gdsloader.loader.io.IoEngine;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.loader.slot.SlotLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
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
 * stops I/O within a bounded time and frees them once. Not thread-safe: one consumer thread.
 */
public final class GdsLoader implements Iterable<Batch>, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(GdsLoader.class.getName());
    /** Most slots a ring may have. */
    public static final int MAX_PREFETCH_DEPTH = 64;
    /** Most I/O threads. */
    public static final int MAX_IO_THREADS = 256;
    /** Largest single read, bytes (1 GiB). */
    public static final long MAX_IO_BYTES = 1L << 30;

    private final Dataset dataset;
    private final Options options;
    private final Sampler sampler;
    private final int batchesPerEpoch;
    private final IoEngine engine;
    private final String pathReason;
    private final ThreadPoolExecutor pool;
    private PrefetchRing ring;
    private EpochPipeline epoch;
    private LoaderStats lastStats;
    private long nextEpoch;
    private long resumeBatches;
    private boolean closed;

    /**
     * Options of a loader.
     *
     * @param batchSize records per batch, &gt; 0
     * @param path requested path
     * @param device CUDA device ordinal
     * @param prefetchDepth slots in the ring, 1..64; 2 or more overlap reads with the consumer (double
     *     buffering), 1 does not and serves as a baseline
     * @param ioThreads threads issuing reads, &ge; 1
     * @param maxIoBytes largest single read, a positive multiple of 4 KiB
     * @param sampler order, shuffle, rank sharding and drop-last
     * @param directIo open shards with {@code O_DIRECT} on the staged paths (where the filesystem allows)
     * @param columns columns to load, empty for all
     * @param resume a saved state to continue from, or null to start at epoch 0
     * @param ioTimeoutMillis how long the consumer waits for one batch's reads before the epoch fails naming
     *     the shards and byte ranges, ms
     * @param gdsThresholdBytes on the GDS path, pieces smaller than this go through pinned staging and a copy
     *     instead of {@code cuFileRead}, bytes; 0 sends every piece through cuFile
     */
    public record Options(int batchSize, ReadPath path, int device, int prefetchDepth, int ioThreads, long maxIoBytes,
                          SamplerOptions sampler, boolean directIo, List<String> columns, LoaderState resume,
                          long ioTimeoutMillis, long gdsThresholdBytes) {
        /**
         * @throws IllegalArgumentException naming the first invalid option
         */
        public Options {
            if (batchSize <= 0) {
                throw new IllegalArgumentException("batchSize must be > 0 records, got " + batchSize);
            }
            if (prefetchDepth < 1 || prefetchDepth > MAX_PREFETCH_DEPTH) {
                throw new IllegalArgumentException("prefetchDepth must be 1.." + MAX_PREFETCH_DEPTH + " slots, got " + prefetchDepth);
            }
            if (ioThreads < 1 || ioThreads > MAX_IO_THREADS) {
                throw new IllegalArgumentException("ioThreads must be 1.." + MAX_IO_THREADS + ", got " + ioThreads);
            }
            if (maxIoBytes <= 0 || !Alignment.isAligned(maxIoBytes) || maxIoBytes > MAX_IO_BYTES) {
                throw new IllegalArgumentException("maxIoBytes must be a multiple of 4096 in 4096.." + MAX_IO_BYTES
                        + " bytes, got " + maxIoBytes);
            }
            if (device < 0) {
                throw new IllegalArgumentException("device must be >= 0, got " + device);
            }
            java.util.Objects.requireNonNull(sampler, "sampler");
            if (ioTimeoutMillis <= 0) {
                throw new IllegalArgumentException("ioTimeoutMillis must be > 0, got " + ioTimeoutMillis);
            }
            if (gdsThresholdBytes < 0) {
                throw new IllegalArgumentException("gdsThresholdBytes must be >= 0 (0: every piece through cuFile), got "
                        + gdsThresholdBytes);
            }
            columns = List.copyOf(columns);
        }
    }

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

    private GdsLoader(Dataset dataset, Options options, String ioReason) throws IOException {
        this.dataset = dataset.select(options.columns());
        this.options = options;
        long[] shardRecords = this.dataset.columns().get(0).shards().stream().mapToLong(RecordLayout::recordCount).toArray();
        this.sampler = new Sampler(options.sampler(), shardRecords, options.batchSize());
        this.batchesPerEpoch = ReadPlanner.batches((int) sampler.recordsOf(options.sampler().rank()), options.batchSize(),
                options.sampler().dropLast());
        if (options.resume() != null) {
            checkResumable(options.resume());
            this.nextEpoch = options.resume().epoch();
            this.resumeBatches = options.resume().batchesConsumed();
        }
        if (options.path() != ReadPath.HOST && Cuda.availability().available()) {
            CudaDevice.makeCurrent(options.device());
        }
        PathSelector.Selection sel = PathSelector.select(options.path(), this.dataset,
                new EngineConfig(options.maxIoBytes(), options.directIo(), options.gdsThresholdBytes()));
        this.engine = sel.engine();
        // the O_DIRECT choice matters to the staged paths only: cuFile opens its files itself
        this.pathReason = engine.pathTaken().equals(PathTaken.GDS.name()) ? sel.reason() : sel.reason() + "; " + ioReason;
        if (options.path() == ReadPath.AUTO) {
            LOG.info(() -> "gdsloader path " + pathReason); // the one line saying why AUTO chose this path
        } else {
            LOG.fine(() -> "gdsloader path " + pathReason);
        }
        List<dev.gdsloader.loader.dataset.Column> cols = this.dataset.columns();
        int[] maxPieces = new int[cols.size()];
        for (int c = 0; c < maxPieces.length; c++) {
            maxPieces[c] = sampler.maxPiecesPerBatch(options.batchSize(), cols.get(c).shards().size());
        }
        SlotLayout layout = SlotLayout.forBatch(cols, options.batchSize(), c -> maxPieces[c]);
        // a queue that holds every task of every slot, so submitting never blocks, rejects or allocates
        int queue = Math.max(16, options.prefetchDepth() * engine.maxOps(layout, maxPieces));
        this.pool = new ThreadPoolExecutor(options.ioThreads(), options.ioThreads(), 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queue), ioThreads(options.device(), PathTaken.valueOf(engine.pathTaken()).onDevice()));
        try {
            checkHostMemory(engine.hostBytesPerSlot(layout), options.prefetchDepth());
            ring = PrefetchRing.allocate(engine, cols, layout, maxPieces, options.prefetchDepth());
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            close(); // frees the engine's files (the ring frees what it had made itself)
            throw e;
        }
    }

    /** Refuses rings whose host memory (pinned or plain, as the engine says) would exceed half of the machine's memory. */
    private static void checkHostMemory(long perSlot, int depth) {
        long total = DirectIoPolicy.hostMemoryBytes();
        if (perSlot > 0 && (double) perSlot * depth > total / 2.0) {
            throw new IllegalArgumentException(String.format(java.util.Locale.ROOT,
                    "prefetch depth %d x %.1f MiB of host memory per slot = %.2f GB exceeds half of this machine's %.1f GB: "
                            + "use a smaller batch or prefetch depth", depth, perSlot / 1048576.0, (double) perSlot * depth / 1e9,
                    total / 1e9));
        }
    }

    private static ThreadFactory ioThreads(int device, boolean gpu) {
        AtomicInteger n = new AtomicInteger();
        return r -> Thread.ofPlatform().daemon().name("gdsloader-io-" + n.getAndIncrement()).unstarted(() -> {
            if (gpu) {
                CudaDevice.makeCurrent(device);
            }
            r.run();
        });
    }

    /** @return the dataset, restricted to the selected columns */
    public Dataset dataset() {
        return dataset;
    }

    /** @return the options in force */
    public Options options() {
        return options;
    }

    /** @return the path batches take */
    public PathTaken pathTaken() {
        return PathTaken.valueOf(engine.pathTaken());
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
        SamplerOptions so = options.sampler();
        return new LoaderState(1, e, consumed, sampler.datasetRecords(), options.batchSize(), so.shuffle(), so.seed(),
                so.blockRecords(), so.rank(), so.worldSize(), so.partition(), so.dropLast());
    }

    private void checkResumable(LoaderState s) {
        LoaderState now = new LoaderState(1, s.epoch(), s.batchesConsumed(), sampler.datasetRecords(), options.batchSize(),
                options.sampler().shuffle(), options.sampler().seed(), options.sampler().blockRecords(), options.sampler().rank(),
                options.sampler().worldSize(), options.sampler().partition(), options.sampler().dropLast());
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
     * @return an iterator over the epoch's batches, in order
     * @throws IllegalStateException if the loader is closed, or the previous epoch still has batches the
     *     consumer has not released (naming how many)
     */
    @Override
    public Iterator<Batch> iterator() {
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
        long e = nextEpoch++;
        long skip = resumeBatches;
        resumeBatches = 0;
        epoch = new EpochPipeline(dataset, sampler.order(e), options.batchSize(), skip, batchesPerEpoch, ring, pool,
                TimeUnit.MILLISECONDS.toNanos(options.ioTimeoutMillis()));
        return epoch;
    }

    /** @return counters of the current (or last) epoch */
    public LoaderStats stats() {
        return epoch != null ? epoch.stats() : lastStats != null ? lastStats
                : new LoaderStats(pathTaken(), 0, 0, 0, 0, 0, 0, 0);
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
        boolean stopped = epoch == null || epoch.stop(10_000);
        pool.shutdownNow();
        try {
            stopped &= pool.awaitTermination(stopped ? 10 : 1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = false;
        }
        if (!stopped) {
            LOG.warning("gdsloader: reads still blocked at close; their slots are left allocated rather than freed under I/O");
            return;
        }
        try {
            if (ring != null) {
                ring.close();
            }
        } finally {
            engine.close();
        }
    }

    /**
     * Builds a {@link GdsLoader}. Not thread-safe.
     */
    public static final class Builder {
        private final Path dir;
        private final Dataset dataset;
        private int batchSize;
        private ReadPath path = ReadPath.AUTO;
        private int device;
        private int prefetchDepth = 4;
        private int ioThreads = 4;
        private long maxIoBytes = 8L << 20;
        private SamplerOptions sampler = SamplerOptions.sequential();
        private Boolean directIo; // null: DirectIoPolicy decides
        private List<String> columns = List.of();
        private LoaderState resume;
        private boolean blockSet;
        private long ioTimeoutMillis = 60_000;
        private Long gdsThresholdBytes; // null: GDSLOADER_GDS_THRESHOLD, else GdsEngine.DEFAULT_THRESHOLD

        private Builder(Path dir, Dataset dataset) {
            this.dir = dir;
            this.dataset = dataset;
        }

        /**
         * @param records records per batch, &gt; 0
         * @return this
         */
        public Builder batchSize(int records) {
            this.batchSize = records;
            return this;
        }

        /**
         * @param path requested path
         * @return this
         */
        public Builder path(ReadPath path) {
            this.path = path;
            return this;
        }

        /**
         * @param ordinal CUDA device ordinal
         * @return this
         */
        public Builder device(int ordinal) {
            this.device = ordinal;
            return this;
        }

        /**
         * @param slots slots in the prefetch ring, 1..64 (1: no overlap, a baseline)
         * @return this
         */
        public Builder prefetchDepth(int slots) {
            this.prefetchDepth = slots;
            return this;
        }

        /**
         * @param threads threads issuing reads, &ge; 1
         * @return this
         */
        public Builder ioThreads(int threads) {
            this.ioThreads = threads;
            return this;
        }

        /**
         * @param bytes largest single read, positive multiple of 4096
         * @return this
         */
        public Builder maxIoBytes(long bytes) {
            this.maxIoBytes = bytes;
            return this;
        }

        /**
         * @param drop give every rank {@code floor(N / worldSize)} records and drop a short last batch
         * @return this
         */
        public Builder dropLast(boolean drop) {
            SamplerOptions s = sampler;
            this.sampler = new SamplerOptions(s.shuffle(), s.seed(), s.blockRecords(), s.rank(), s.worldSize(), s.partition(), drop);
            return this;
        }

        /**
         * @param shuffle how records are ordered each epoch
         * @param seed seed of the shuffle; the order is a function of (seed, epoch, rank, world size)
         * @return this
         */
        public Builder shuffle(Shuffle shuffle, long seed) {
            SamplerOptions s = sampler;
            this.sampler = new SamplerOptions(shuffle, seed, s.blockRecords(), s.rank(), s.worldSize(), s.partition(), s.dropLast());
            return this;
        }

        /**
         * @param records block size of {@link Shuffle#SHARD_BLOCKS}, &ge; 1 (default: the batch size)
         * @return this
         */
        public Builder blockRecords(int records) {
            SamplerOptions s = sampler;
            this.sampler = new SamplerOptions(s.shuffle(), s.seed(), records, s.rank(), s.worldSize(), s.partition(), s.dropLast());
            blockSet = true;
            return this;
        }

        /**
         * @param rank this process's rank
         * @param worldSize number of ranks
         * @param partition how records split when N does not divide by the world size
         * @return this
         */
        public Builder ranks(int rank, int worldSize, Partition partition) {
            SamplerOptions s = sampler;
            this.sampler = new SamplerOptions(s.shuffle(), s.seed(), s.blockRecords(), rank, worldSize, partition, s.dropLast());
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
            SamplerOptions s = sampler.withRankFrom(System.getenv());
            return ranks(s.rank(), s.worldSize(), partition);
        }

        /**
         * @param millis how long the consumer waits for one batch's reads before the epoch fails (default 60 s)
         * @return this
         */
        public Builder ioTimeoutMillis(long millis) {
            this.ioTimeoutMillis = millis;
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
         */
        public Builder gdsThresholdBytes(long bytes) {
            this.gdsThresholdBytes = bytes;
            return this;
        }

        /**
         * @param state a state saved by {@link GdsLoader#state()}; the loader continues with the next batch
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
            this.directIo = direct;
            return this;
        }

        /**
         * @param names columns to load (all when none are given)
         * @return this
         */
        public Builder columns(String... names) {
            this.columns = List.of(names);
            return this;
        }

        /**
         * Opens the dataset, picks the path, allocates the slots and starts the I/O threads.
         *
         * @return the loader, owned by the caller
         * @throws IOException if the dataset cannot be read (naming file and offset) or GDS was requested
         *     and a shard cannot be registered
         * @throws IllegalArgumentException on invalid options
         * @throws IllegalStateException if the requested path is not possible here (with the reason)
         * @throws dev.gdsloader.cuda.CudaException if device or pinned memory cannot be allocated
         */
        public GdsLoader build() throws IOException {
            SamplerOptions so = sampler;
            if (!blockSet && batchSize > 0) {
                so = new SamplerOptions(so.shuffle(), so.seed(), batchSize, so.rank(), so.worldSize(), so.partition(), so.dropLast());
            }
            Dataset d = dataset != null ? dataset : Dataset.open(dir);
            DirectIoPolicy.Choice io = DirectIoPolicy.choose(directIo,
                    (columns.isEmpty() ? d : d.select(columns)).dataBytes(), DirectIoPolicy.hostMemoryBytes());
            long threshold = gdsThresholdBytes != null ? gdsThresholdBytes : GdsEngine.thresholdFromEnvironment(System.getenv());
            Options o = new Options(batchSize, path, device, prefetchDepth, ioThreads, maxIoBytes, so, io.direct(), columns,
                    resume, ioTimeoutMillis, threshold);
            return new GdsLoader(d, o, io.reason());
        }
    }
}
