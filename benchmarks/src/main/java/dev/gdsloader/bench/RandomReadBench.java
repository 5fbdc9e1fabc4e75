package dev.gdsloader.bench;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderStats;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.posix.AlignedMemory;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sample-level shuffle against the storage's random-read rate, in one run: the ceiling reads every record
 * of a one-column dataset once per pass, in a random order (warmed by at least one untimed pass first, then timed over
 * the loader's rounds and epochs per round: {@link #ceilingWarmups}), with {@code pread} on T threads and no GPU ({@code O_DIRECT}
 * of each record's 4 KiB-aligned cover, or with {@link Config#directIo()} false a buffered read of exactly the
 * record); each loader path then loads {@link Config#epochs()} epochs per round (after {@link Config#warmupEpochs()}) with a global shuffle and T I/O threads, releasing
 * each batch as soon as it arrives (no consumer work). Throughput counts useful record bytes; CPU time is the
 * whole process's ({@code OperatingSystemMXBean.getProcessCpuTime}: every thread, the JIT and GC included) over
 * the same interval as the wall time. Not thread-safe; one run at a time.
 */
public final class RandomReadBench {
    private RandomReadBench() {
    }

    /**
     * What to run.
     *
     * @param data a dataset directory with one column
     * @param paths loader paths to measure, in this order in the first round (may be empty: the ceiling only)
     * @param threads I/O threads of the ceiling and of the loader, 1..256
     * @param depth the loader's prefetch depth, slots, 1..64
     * @param batchRecords records per batch, at least 1 (capped at the dataset's records, with a note)
     * @param directIo false: buffered reads (page cache) for the ceiling and the staged loader paths; true:
     *                 {@code O_DIRECT} for both; null: {@code O_DIRECT} for the ceiling, the loader's own policy
     *                 ({@code GdsLoader.Builder.directIo} not called)
     * @param ceiling measure the {@code pread} ceiling before the loader paths
     * @param dropCaches drop the page cache before each measurement (root; otherwise a note says it could not)
     * @param rounds rounds per path (each a fresh loader timing {@code epochs} epochs), at least 1; the path order rotates each round and medians are reported
     * @param hot read every shard once, buffered, before anything is measured (the page cache warm); then
     *     {@code directIo} must be false and {@code dropCaches} off
     * @param gatherCeiling on a GPU, also measure the gather ceiling ({@link GatherCeiling}) at the column's record
     *     size and the batch size, reported as a row after the {@code pread} ceiling
     * @param epochs epochs each round's loader times, back to back, at least 1 (a training loop's epochs on one loader;
     *     the round's GB/s is over all of them, epoch boundaries included)
     * @param warmupEpochs epochs each round's loader runs before the timed ones, at least 0 (JIT, first touches: as the
     *     gather ceiling runs one untimed epoch first)
     */
    public record Config(Path data, List<ReadPath> paths, int threads, int depth, int batchRecords, Boolean directIo,
                         boolean ceiling, boolean dropCaches, int rounds, boolean hot, boolean gatherCeiling,
                         int epochs, int warmupEpochs) {
        /**
         * One timed epoch per loader, no warm-up; the other parameters as in the record's.
         *
         * @param data the dataset directory
         * @param paths loader paths
         * @param threads I/O threads
         * @param depth prefetch depth, slots
         * @param batchRecords records per batch
         * @param directIo O_DIRECT for the ceiling and the staged paths, or null for the loader's own policy
         * @param ceiling measure the pread ceiling
         * @param dropCaches drop the page cache before each measurement
         * @param rounds rounds per path
         * @param hot warm the page cache first
         * @param gatherCeiling measure the gather ceilings
         */
        public Config(Path data, List<ReadPath> paths, int threads, int depth, int batchRecords, Boolean directIo,
                      boolean ceiling, boolean dropCaches, int rounds, boolean hot, boolean gatherCeiling) {
            this(data, paths, threads, depth, batchRecords, directIo, ceiling, dropCaches, rounds, hot, gatherCeiling, 1, 0);
        }

        /**
         * @throws IllegalArgumentException naming the field out of range, or hot with O_DIRECT or dropped caches
         * @throws NullPointerException if data or paths is null
         */
        public Config {
            Objects.requireNonNull(data, "data");
            paths = List.copyOf(paths);
            if (hot && (dropCaches || Boolean.TRUE.equals(directIo))) {
                throw new IllegalArgumentException("hot (page cache warm) reads buffered and drops nothing: not with "
                        + (dropCaches ? "dropped caches" : "O_DIRECT"));
            }
            if (threads < 1 || threads > 256) {
                throw new IllegalArgumentException("threads must be 1..256, got " + threads);
            }
            if (depth < 1 || depth > dev.gdsloader.loader.LoaderOptions.MAX_PREFETCH_DEPTH) {
                throw new IllegalArgumentException("depth must be 1.." + dev.gdsloader.loader.LoaderOptions.MAX_PREFETCH_DEPTH
                        + " slots, got " + depth);
            }
            if (batchRecords < 1) {
                throw new IllegalArgumentException("batchRecords must be at least 1, got " + batchRecords);
            }
            if (rounds < 1) {
                throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
            }
            if (epochs < 1 || warmupEpochs < 0) {
                throw new IllegalArgumentException("epochs must be at least 1 and warm-up epochs at least 0, got " + epochs
                        + " and " + warmupEpochs);
            }
        }
    }

    /**
     * One reader's result (medians over the rounds).
     *
     * @param reader "pread" for the ceiling, "gather" for the gather ceiling over pinned memory, "gather-registered" for
     *     the gather ceiling over the dataset's shards mapped and registered as MAPPED registers them, "gather-sampler"
     *     for that ceiling in the loader's global-shuffle order (seed 99, epoch 0) instead of a uniform random one,
     *     "gather-one-buffer" for that ceiling writing one batch buffer over and over (the others write as many as the
     *     loader has slots, {@link Config#depth()}, in turn: one buffer stays in the GPU's L2 cache, a loader's slots do
     *     not), "loader" for a loader path
     * @param requested the path asked for; null for the ceiling
     * @param taken the path the batches took; null for the ceiling
     * @param recordBytes bytes per record
     * @param records records read per round
     * @param recordsPerSecond median records per second
     * @param gigabytesPerSecond median useful GB/s (1e9 bytes per second)
     * @param cpuSecondsPerGigabyte median process CPU seconds per 1e9 useful bytes; NaN where the JVM cannot tell
     * @param perRoundGbps GB/s of every round, in round order
     * @param gpuBusy median over rounds of the fraction of the loader's wall time its GPU transfers took
     *     ({@code LoaderStats.deviceNanos} per counted batch, times batches, over wall time); NaN where the path does
     *     not time them, and for the ceilings
     * @param direct how the reader's bytes came: true with {@code O_DIRECT} reads (the pread ceiling so read; the GDS
     *     path; a staged path reading with {@code O_DIRECT}), false from the page cache (buffered reads; the MAPPED path),
     *     null for the gather kernel. A row's "x ceiling" is over the pread ceiling of the same kind
     */
    @SuppressWarnings("ArrayRecordComponent") // a report row, never compared
    public record Row(String reader, ReadPath requested, PathTaken taken, long recordBytes, long records,
                      double recordsPerSecond, double gigabytesPerSecond, double cpuSecondsPerGigabyte,
                      double[] perRoundGbps, Boolean direct, double gpuBusy) {
        /** @return the label of the table's first column, naming how the reads were made */
        public String label() {
            if (reader.equals("gather")) {
                return "gather ceiling (kernel, pinned)";
            }
            if (reader.equals("gather-registered")) {
                return "gather ceiling (kernel, page cache)";
            }
            if (reader.equals("gather-sampler")) {
                return "gather ceiling (page cache, loader order)";
            }
            if (reader.equals("gather-one-buffer")) {
                return "gather ceiling (page cache, one buffer)";
            }
            String io = direct == null ? "" : direct ? ", O_DIRECT" : taken == PathTaken.MAPPED ? ", page cache" : ", buffered";
            return (requested == null ? "pread, random" : "loader " + taken + ", global shuffle") + io;
        }

        /** @return "O_DIRECT", "buffered" (the page cache) or null (the gather kernel), for the JSON line */
        String io() {
            return direct == null ? null : direct ? "O_DIRECT" : "buffered";
        }
    }

    /**
     * Runs the benchmark, printing a table (and, with {@code json}, one JSON object per row on its own line).
     *
     * @param c what to run
     * @param json also print each row as one JSON line (for scripts: lines starting with '{')
     * @param out where the table goes
     * @return the rows: the pread ceiling first when measured, the gather ceiling next when measured, then (when a loader
     *     path read the other way, {@code O_DIRECT} or buffered) the pread ceiling read that way, measured after the
     *     loader paths, then one per path in {@link Config#paths()} order
     * @throws IllegalArgumentException if the dataset has more or fewer than one column
     * @throws java.io.IOException naming the dataset if it holds no records (nothing to measure), before any row
     * @throws Exception if reading fails
     */
    public static List<Row> run(Config c, boolean json, PrintStream out) throws Exception {
        Dataset ds = Dataset.open(c.data());
        if (ds.columns().size() != 1) {
            throw new IllegalArgumentException(c.data() + ": the random-read benchmark wants a dataset with one column, found "
                    + ds.columns().stream().map(Column::name).toList());
        }
        Column col = ds.columns().get(0);
        BenchRunner.requireRecords(c.data(), ds); // 0 records would print rows of NaN
        int batchSize = c.batchRecords();
        if (batchSize > col.recordCount()) { // a batch past the dataset would size slots and queues for records that do not exist
            out.printf(Locale.ROOT, "note: a batch of %d records is more than the dataset's %d records; one batch holds all of them%n",
                    batchSize, col.recordCount());
            batchSize = (int) Math.max(1, col.recordCount());
        }
        String dropNote = null;
        if (c.hot()) {
            long t0 = System.nanoTime();
            long warmed = PageCache.warm(col.shards().stream().map(RecordLayout::file).toList());
            double s = (System.nanoTime() - t0) / 1e9;
            out.printf(Locale.ROOT, "page cache warmed: %s of %d shard%s read once, buffered, in %.2f s%n",
                    bytes(warmed), col.shards().size(), col.shards().size() == 1 ? "" : "s", s);
        }
        out.printf(Locale.ROOT, "%d records of %d bytes (data offset %d), %d threads, depth %d, batch %d (%s), %s, %s, %d round%s%s%n",
                col.recordCount(), col.recordBytes(), col.shards().get(0).dataOffset(), c.threads(), c.depth(), batchSize,
                bytes(batchSize * col.recordBytes()), c.dropCaches() ? "cold" : c.hot() ? "hot" : "warm", c.directIo() == null ? "O_DIRECT ceiling, the loader's own I/O policy"
                        : c.directIo() ? "O_DIRECT" : "buffered reads",
                c.rounds(), c.rounds() == 1 ? "" : "s", epochsNote(c));
        if (c.ceiling()) {
            out.printf(Locale.ROOT, "pread ceiling: %d untimed warm-up pass%s, then %d timed pass%s per round, as the loader's "
                    + "epochs%n", ceilingWarmups(c), ceilingWarmups(c) == 1 ? "" : "es", c.epochs(), c.epochs() == 1 ? "" : "es");
        }
        out.printf(Locale.ROOT, "%-" + LABEL + "s %12s %10s %10s %9s %8s%n", "reader", "records/s", "GB/s", "x ceiling", "CPU s/GB",
                "GPU busy");
        List<Row> rows = new ArrayList<>();
        // the pread ceiling read with O_DIRECT ([1]) and buffered ([0]); each row is compared with the one read as it was
        Row[] ceilings = new Row[2];
        Row ceiling = null;
        Row gather = null;
        Row gatherRegistered = null;
        boolean ceilingDirect = !Boolean.FALSE.equals(c.directIo());
        if (c.ceiling()) {
            dropNote = firstNonNull(dropNote, measureCeiling(c, col, ceilingDirect, ceilings));
            ceiling = ceilings[ceilingDirect ? 1 : 0];
            rows.add(ceiling);
            print(out, ceiling, ceiling);
        }
        if (c.gatherCeiling() && dev.gdsloader.cuda.Cuda.availability().available()) {
            // every ceiling writes depth batch buffers in turn, as the loader's ring of depth slots is written
            gather = gatherRow("gather", GatherCeiling.measure(col.recordBytes(), batchSize,
                    Math.min(GatherCeiling.DEFAULT_SOURCE_BYTES, col.recordBytes() * Math.max(1, col.recordCount())), 99,
                    c.depth()), "pinned memory", col, rows, out, ceiling);
            gatherRegistered = gatherRow("gather-registered", GatherCeiling.measureRegistered(col.shards(), batchSize, 99,
                    c.depth()), "the registered shards", col, rows, out, ceiling);
            // the same kernel and shards in the loader's own order (its global shuffle of round 0): the order's share
            long[] shardRecords = col.shards().stream().mapToLong(RecordLayout::recordCount).toArray();
            long[] loaderOrder = new Sampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 99), shardRecords, 1)
                    .order(0).records();
            gatherRow("gather-sampler", GatherCeiling.measureRegistered(col.shards(), batchSize,
                    n -> java.util.Arrays.stream(loaderOrder, 0, n).mapToInt(Math::toIntExact).toArray(), c.depth()),
                    "the registered shards in the loader's order", col, rows, out, ceiling);
            // for reference: the same ceiling writing one batch buffer over and over, which stays in the GPU's L2 cache
            gatherRow("gather-one-buffer", GatherCeiling.measureRegistered(col.shards(), batchSize, 99, 1),
                    "the registered shards into one buffer", col, rows, out, ceiling);
        }
        List<List<double[]>> byPath = new ArrayList<>(); // [path] -> rounds of {gbps, cpu s/GB}
        PathTaken[] taken = new PathTaken[c.paths().size()];
        Boolean[] direct = new Boolean[c.paths().size()];
        c.paths().forEach(p -> byPath.add(new ArrayList<>()));
        for (int round = 0; round < c.rounds(); round++) {
            for (int k = 0; k < c.paths().size(); k++) {
                int i = (k + round) % c.paths().size();
                dropNote = c.dropCaches() ? firstNonNull(dropNote, PageCache.drop()) : null;
                GdsLoader.Builder b = GdsLoader.builder(ds).batchSize(batchSize).path(c.paths().get(i)).ioThreads(c.threads())
                        .prefetchDepth(c.depth()).shuffle(Shuffle.GLOBAL, 99 + round);
                if (c.directIo() != null) {
                    b.directIo(c.directIo());
                }
                try (GdsLoader loader = b.build();
                     CudaStream consumer = loader.pathTaken().onDevice() ? CudaStream.create() : null) {
                    for (int w = 0; w < c.warmupEpochs(); w++) {
                        drainEpoch(loader, consumer);
                    }
                    long cpu0 = CpuTime.processNanos();
                    long t0 = System.nanoTime();
                    long bytes = 0;
                    long batches = 0;
                    long deviceNanos = 0;
                    long deviceBatches = 0;
                    for (int e = 0; e < c.epochs(); e++) {
                        LoaderStats s = drainEpoch(loader, consumer);
                        bytes += s.bytes();
                        batches += s.batches();
                        deviceNanos += s.deviceNanos();
                        deviceBatches += s.deviceBatches();
                    }
                    long wall = System.nanoTime() - t0;
                    taken[i] = loader.pathTaken();
                    direct[i] = loader.pathTaken() == PathTaken.GDS || (loader.pathTaken() != PathTaken.MAPPED
                            && loader.options().directIo());
                    double busy = deviceBatches == 0 ? Double.NaN : deviceNanos / (double) deviceBatches * batches / wall;
                    byPath.get(i).add(new double[] {bytes / (double) wall, cpuPerGb(cpu0, bytes), busy});
                }
            }
        }
        if (c.ceiling() && java.util.Arrays.stream(direct).anyMatch(d -> d != null && d != ceilingDirect)) {
            // a loader path read the other way than the ceiling (its own I/O policy, GDS or MAPPED): compare like with like
            dropNote = firstNonNull(dropNote, measureCeiling(c, col, !ceilingDirect, ceilings));
            rows.add(ceilings[ceilingDirect ? 0 : 1]);
            print(out, ceilings[ceilingDirect ? 0 : 1], ceilings[ceilingDirect ? 0 : 1]);
        }
        for (int i = 0; i < c.paths().size(); i++) {
            double[] gbps = byPath.get(i).stream().mapToDouble(v -> v[0]).toArray();
            double[] cpu = byPath.get(i).stream().mapToDouble(v -> v[1]).toArray();
            double[] busy = byPath.get(i).stream().mapToDouble(v -> v[2]).toArray();
            Row row = row("loader", c.paths().get(i), taken[i], col, gbps, cpu, direct[i], busy);
            rows.add(row);
            print(out, row, ceilingOf(row, ceilings));
        }
        if (ceilings[0] != null && ceilings[1] != null) {
            out.println("note: x ceiling is over the pread ceiling read the same way: O_DIRECT rows over the O_DIRECT ceiling, "
                    + "buffered and MAPPED (page cache) rows over the buffered one");
        }
        if (dropNote != null) {
            out.println("note: " + dropNote);
        }
        if (c.gatherCeiling() && !dev.gdsloader.cuda.Cuda.availability().available()) { // asked for, not silently absent
            out.println("note: no gather ceiling rows: the gather kernel needs a GPU; CUDA is not available: "
                    + dev.gdsloader.cuda.Cuda.availability().reason());
        }
        if (json) {
            for (Row r : rows) {
                out.println(json(r, c, batchSize, r.reader().startsWith("gather") ? ceiling : ceilingOf(r, ceilings), gather,
                        gatherRegistered, dropNote == null && c.dropCaches()));
            }
        }
        return rows;
    }

    /**
     * Adds and prints the row of one gather ceiling, then requires its last batch byte-exact.
     *
     * @return the row
     */
    private static Row gatherRow(String reader, GatherCeiling.Result g, String source, Column col, List<Row> rows,
                                 PrintStream out, Row ceiling) {
        Row r = row(reader, null, null, col, new double[] {g.gigabytesPerSecond()}, new double[] {Double.NaN}, null);
        rows.add(r);
        print(out, r, ceiling);
        requireExact(g, source);
        return r;
    }

    private static void requireExact(GatherCeiling.Result g, String source) {
        if (!g.byteExact()) {
            throw new IllegalStateException("gather ceiling over " + source + ": the last batch gathered on the GPU is not "
                    + "byte-exact against its source records (" + g.recordBytes() + "-byte records)");
        }
    }

    /** Width of the table's first column. */
    private static final int LABEL = 40;

    /**
     * Measures the pread ceiling read with {@code O_DIRECT} or buffered, {@code c.rounds()} times, into
     * {@code ceilings[direct ? 1 : 0]}.
     *
     * @return why the page cache could not be dropped, or null
     */
    private static String measureCeiling(Config c, Column col, boolean direct, Row[] ceilings) throws Exception {
        String dropNote = null;
        double[] gbps = new double[c.rounds()];
        double[] cpu = new double[c.rounds()];
        for (int w = 0; w < ceilingWarmups(c); w++) { // untimed, as the loader rows' warm-up: JIT, threads, first touches
            ceiling(col, c.threads(), direct);
        }
        for (int r = 0; r < c.rounds(); r++) {
            dropNote = c.dropCaches() ? firstNonNull(dropNote, PageCache.drop()) : null;
            long cpu0 = CpuTime.processNanos();
            long t0 = System.nanoTime();
            long bytes = 0;
            for (int e = 0; e < c.epochs(); e++) { // as many passes as the loader's timed epochs per round
                bytes += ceiling(col, c.threads(), direct);
            }
            long wall = System.nanoTime() - t0;
            gbps[r] = bytes / (double) wall;
            cpu[r] = cpuPerGb(cpu0, bytes);
        }
        ceilings[direct ? 1 : 0] = row("pread", null, null, col, gbps, cpu, direct);
        return dropNote;
    }

    /**
     * Untimed passes of the {@code pread} ceiling before its timed rounds: the loader rows' warm-up epochs, and at least
     * one (a ceiling measured cold, its threads and code paths new, made loader rows look several times "x ceiling").
     * With dropped caches every timed round still starts cold: the drop comes after the warm-up.
     *
     * @param c the run
     * @return passes, at least 1
     */
    static int ceilingWarmups(Config c) {
        return Math.max(1, c.warmupEpochs());
    }

    /** @return the pread ceiling read the way {@code r} read (null where not measured) */
    private static Row ceilingOf(Row r, Row[] ceilings) {
        return r.direct() == null ? null : ceilings[r.direct() ? 1 : 0];
    }

    private static Row row(String reader, ReadPath requested, PathTaken taken, Column col, double[] gbps, double[] cpu,
                           Boolean direct) {
        return row(reader, requested, taken, col, gbps, cpu, direct, new double[] {Double.NaN});
    }

    private static Row row(String reader, ReadPath requested, PathTaken taken, Column col, double[] gbps, double[] cpu,
                           Boolean direct, double[] gpuBusy) {
        double g = Stats.median(gbps);
        return new Row(reader, requested, taken, col.recordBytes(), col.recordCount(), g * 1e9 / col.recordBytes(), g,
                Stats.median(cpu), gbps, direct, Stats.median(gpuBusy));
    }

    /**
     * @param c the run
     * @return "" for one timed epoch per round and no warm-up (the default), else e.g. {@code ", 3 timed epochs per
     *     round after 1 warm-up"}, so the header says what {@code --epochs} and {@code --warmup-epochs} asked for
     */
    static String epochsNote(Config c) {
        if (c.epochs() == 1 && c.warmupEpochs() == 0) {
            return "";
        }
        return String.format(Locale.ROOT, ", %d timed epoch%s per round after %d warm-up", c.epochs(), c.epochs() == 1 ? "" : "s",
                c.warmupEpochs());
    }

    /**
     * Runs one epoch as a training loop with no compute: each batch waited for and released on {@code consumer} (or
     * closed, off the GPU); the stream drained at the end, so every batch counted has landed.
     *
     * @return the epoch's counters
     */
    private static LoaderStats drainEpoch(GdsLoader loader, CudaStream consumer) {
        Iterator<Batch> it = loader.iterator();
        while (it.hasNext()) {
            Batch batch = it.next();
            if (consumer != null) {
                batch.awaitOn(consumer);
                batch.release(consumer);
            } else {
                batch.close();
            }
        }
        if (consumer != null) {
            consumer.synchronize();
        }
        return loader.stats();
    }

    private static void print(PrintStream out, Row r, Row ceiling) {
        out.printf(Locale.ROOT, "%-" + LABEL + "s %12.0f %10.3f %10s %9s %8s%n", r.label(), r.recordsPerSecond(), r.gigabytesPerSecond(),
                ceiling == null ? "-" : String.format(Locale.ROOT, "%.2f", r.gigabytesPerSecond() / ceiling.gigabytesPerSecond()),
                Double.isNaN(r.cpuSecondsPerGigabyte()) ? "-" : String.format(Locale.ROOT, "%.3f", r.cpuSecondsPerGigabyte()),
                Double.isNaN(r.gpuBusy()) ? "-" : String.format(Locale.ROOT, "%.2f", r.gpuBusy()));
    }

    /**
     * @return the row as one JSON object on one line; numbers that are not finite are written as null; {@code x_gather}
     *     is the row over the gather ceiling over pinned memory, {@code x_gather_registered} over the one over the
     *     registered shards (null without one); {@code x_ceiling} is over {@code ceiling}, the pread ceiling read the
     *     same way as the row (null without one); {@code io} is how the row's reads were made
     */
    static String json(Row r, Config c, int batchRecords, Row ceiling, Row gather, Row gatherRegistered, boolean cold) {
        return String.format(Locale.ROOT, "{\"bench\":\"random\",\"reader\":\"%s\",\"path\":%s,\"taken\":%s,\"record_bytes\":%d,"
                        + "\"records\":%d,\"batch_records\":%d,\"batch_bytes\":%d,\"threads\":%d,\"direct\":%s,\"cold\":%b,\"hot\":%b,"
                        + "\"rounds\":%d,\"records_per_s\":%s,\"gbps\":%s,\"cpu_s_per_gb\":%s,\"x_ceiling\":%s,\"x_gather\":%s,"
                        + "\"x_gather_registered\":%s,\"gbps_rounds\":%s,\"io\":%s,\"gpu_busy\":%s,\"epochs\":%d,"
                        + "\"warmup_epochs\":%d}",
                r.reader(), quoted(r.requested()), quoted(r.taken()), r.recordBytes(), r.records(), batchRecords,
                batchRecords * r.recordBytes(), c.threads(), c.directIo(), cold, c.hot(), c.rounds(), num(r.recordsPerSecond()),
                num(r.gigabytesPerSecond()), num(r.cpuSecondsPerGigabyte()),
                num(ceiling == null ? Double.NaN : r.gigabytesPerSecond() / ceiling.gigabytesPerSecond()),
                num(gather == null ? Double.NaN : r.gigabytesPerSecond() / gather.gigabytesPerSecond()),
                num(gatherRegistered == null ? Double.NaN : r.gigabytesPerSecond() / gatherRegistered.gigabytesPerSecond()),
                java.util.Arrays.stream(r.perRoundGbps()).mapToObj(RandomReadBench::num).toList().toString().replace(" ", ""),
                quoted(r.io()), num(r.gpuBusy()), c.epochs(), c.warmupEpochs());
    }

    private static String quoted(Object o) {
        return o == null ? "null" : "\"" + o + "\"";
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "null";
    }

    private static String bytes(long b) {
        return b >= 1 << 20 ? String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0)
                : String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
    }

    private static String firstNonNull(String a, String b) {
        return a != null ? a : b;
    }

    /** @return process CPU seconds since cpu0 per 1e9 bytes, NaN where CPU time is unknown or no bytes moved */
    private static double cpuPerGb(long cpu0, long bytes) {
        long cpu1 = CpuTime.processNanos();
        return CpuTime.secondsPerGigabyte(cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0, bytes);
    }

    /** @return useful bytes read by T threads reading every record once in a random order */
    private static long ceiling(Column col, int threads, boolean direct) throws Exception {
        long[] shardRecords = col.shards().stream().mapToLong(RecordLayout::recordCount).toArray();
        EpochOrder order = new Sampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 7),
                shardRecords, 1).order(0);
        List<PosixFile> files = new ArrayList<>();
        for (RecordLayout s : col.shards()) {
            files.add(PosixFile.openForRead(s.file(), direct));
        }
        long rec = col.recordBytes();
        long cover = Alignment.up(rec + Alignment.BLOCK);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (AlignedMemory mem = new AlignedMemory(threads * cover)) {
            List<Future<Long>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final long base = t * cover;
                fs.add(pool.submit(() -> {
                    long bytes = 0;
                    for (int i; (i = next.getAndIncrement()) < order.size(); ) {
                        long r = order.get(i);
                        int shard = col.shardOf(r);
                        RecordLayout s = col.shards().get(shard);
                        long off = s.dataOffset() + (r - col.firstRecordOf(shard)) * rec;
                        long start = direct ? Alignment.down(off) : off; // buffered: exactly the record
                        long len = direct ? Alignment.up(off + rec) - start : rec;
                        long n = files.get(shard).read(mem.segment(), base, len, start);
                        if (n < off + rec - start) {
                            throw new IOException(s.file() + ": short read at offset " + start + ": " + n + " of "
                                    + (off + rec - start) + " bytes");
                        }
                        bytes += rec;
                    }
                    return bytes;
                }));
            }
            long bytes = 0;
            for (Future<Long> f : fs) {
                bytes += f.get();
            }
            return bytes;
        } finally {
            pool.shutdownNow();
            files.forEach(PosixFile::close);
        }
    }
}
