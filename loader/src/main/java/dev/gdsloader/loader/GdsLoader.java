package dev.gdsloader.loader;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.io.IoEngine;
import dev.gdsloader.loader.io.PathSelector;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 *         .path(ReadPath.AUTO)     // GDS where cuFile works, else bounce, else host
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

    private final Dataset dataset;
    private final Options options;
    private final List<BatchPlan> plans;
    private final IoEngine engine;
    private final String pathReason;
    private final List<Slot> slots = new ArrayList<>();
    private final ExecutorService pool;
    private EpochPipeline epoch;
    private LoaderStats lastStats;
    private boolean closed;

    /**
     * Options of a loader.
     *
     * @param batchSize records per batch, &gt; 0
     * @param path requested path
     * @param device CUDA device ordinal
     * @param prefetchDepth slots in the ring, &ge; 2
     * @param ioThreads threads issuing reads, &ge; 1
     * @param maxIoBytes largest single read, a positive multiple of 4 KiB
     * @param dropLast drop a short last batch
     * @param directIo open shards with {@code O_DIRECT} on the staged paths (where the filesystem allows)
     * @param columns columns to load, empty for all
     */
    public record Options(int batchSize, ReadPath path, int device, int prefetchDepth, int ioThreads, long maxIoBytes,
                          boolean dropLast, boolean directIo, List<String> columns) {
        /**
         * @throws IllegalArgumentException naming the first invalid option
         */
        public Options {
            if (batchSize <= 0) {
                throw new IllegalArgumentException("batchSize must be > 0 records, got " + batchSize);
            }
            if (prefetchDepth < 2) {
                throw new IllegalArgumentException("prefetchDepth must be >= 2 slots (double buffering), got " + prefetchDepth);
            }
            if (ioThreads < 1) {
                throw new IllegalArgumentException("ioThreads must be >= 1, got " + ioThreads);
            }
            if (maxIoBytes <= 0 || !Alignment.isAligned(maxIoBytes)) {
                throw new IllegalArgumentException("maxIoBytes must be a positive multiple of 4096, got " + maxIoBytes);
            }
            if (device < 0) {
                throw new IllegalArgumentException("device must be >= 0, got " + device);
            }
            columns = List.copyOf(columns);
        }
    }

    /**
     * Starts a builder for the dataset in {@code datasetDir} (a directory of {@code .npy} shards).
     *
     * @param datasetDir directory or single shard
     * @return a builder with defaults: path AUTO, device 0, prefetch depth 4, 4 I/O threads, 8 MiB reads,
     *     O_DIRECT on, keep last batch, all columns; batch size must be set
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

    private GdsLoader(Dataset dataset, Options options) throws IOException {
        this.dataset = dataset.select(options.columns());
        this.options = options;
        this.plans = ReadPlanner.sequential(this.dataset, options.batchSize(), options.dropLast());
        if (options.path() != ReadPath.HOST && Cuda.availability().available()) {
            CudaDevice.makeCurrent(options.device());
        }
        PathSelector.Selection sel = PathSelector.select(options.path(), this.dataset, options.maxIoBytes(), options.directIo());
        this.engine = sel.engine();
        this.pathReason = sel.reason();
        LOG.info(() -> "gdsloader path " + pathReason);
        this.pool = Executors.newFixedThreadPool(options.ioThreads(), ioThreads(options.device(), engine.pathTaken().onDevice()));
        try {
            SlotLayout layout = SlotLayout.forPlans(plans, this.dataset.columns().size());
            for (int i = 0; i < options.prefetchDepth(); i++) {
                slots.add(engine.newSlot(i, layout));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
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
        return engine.pathTaken();
    }

    /** @return one line: the path and why it was chosen */
    public String pathReason() {
        return pathReason;
    }

    /** @return batches per epoch */
    public int batchesPerEpoch() {
        return plans.size();
    }

    /**
     * Starts an epoch.
     *
     * @return an iterator over the epoch's batches, in order
     * @throws IllegalStateException if the loader is closed or another epoch is still running
     */
    @Override
    public Iterator<Batch> iterator() {
        if (closed) {
            throw new IllegalStateException("loader is closed");
        }
        if (epoch != null) {
            if (epoch.hasNext()) {
                throw new IllegalStateException("the previous epoch is still running: finish it or close the loader");
            }
            lastStats = epoch.stats();
            epoch.close();
        }
        epoch = new EpochPipeline(plans, slots, engine, pool, dataset.columns());
        return epoch;
    }

    /** @return counters of the current (or last) epoch */
    public LoaderStats stats() {
        return epoch != null ? epoch.stats() : lastStats != null ? lastStats
                : new LoaderStats(engine.pathTaken(), 0, 0, 0, 0, 0);
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
        RuntimeException first = null;
        for (Slot s : slots) {
            try {
                s.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        engine.close();
        if (first != null) {
            throw first;
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
        private boolean dropLast;
        private boolean directIo = true;
        private List<String> columns = List.of();

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
         * @param slots slots in the prefetch ring, &ge; 2
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
         * @param drop whether to drop a short last batch
         * @return this
         */
        public Builder dropLast(boolean drop) {
            this.dropLast = drop;
            return this;
        }

        /**
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
            Options o = new Options(batchSize, path, device, prefetchDepth, ioThreads, maxIoBytes, dropLast, directIo, columns);
            return new GdsLoader(dataset != null ? dataset : Dataset.open(dir), o);
        }
    }
}
