package dev.gdsloader.bench;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderStats;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs the loader over one dataset through every requested path and measures the raw {@code O_DIRECT}
 * ceiling of the same files in the same run, so each path is reported as a ratio to a baseline measured
 * under the same conditions. Every batch is checked against CRC32Cs computed independently from the
 * files. Not thread-safe; one run at a time.
 */
public final class BenchRunner {
    private BenchRunner() {
    }

    /**
     * @param config what to run
     * @param log progress lines (one per step)
     * @return the report
     * @throws IOException if the dataset cannot be read
     */
    public static BenchReport run(BenchConfig config, PrintStream log) throws IOException {
        return run(config, BenchProgress.lines(log));
    }

    /**
     * @param config what to run
     * @param progress told the number of steps, then each step
     * @return the report
     * @throws IOException if the dataset cannot be read
     */
    public static BenchReport run(BenchConfig config, BenchProgress progress) throws IOException {
        try {
            return measure(config, progress);
        } finally {
            progress.finish();
        }
    }

    /**
     * Refuses a dataset of no records before a benchmark starts. Stateless, thread-safe.
     *
     * @param data the dataset's path, for the message
     * @param dataset the opened dataset
     * @return its record count, &gt; 0
     * @throws IOException naming the dataset and its columns if it holds no records: nothing to measure
     */
    public static long requireRecords(Path data, Dataset dataset) throws IOException {
        long records = dataset.recordCount();
        if (records == 0) {
            throw new IOException(data + ": the dataset holds no records (its columns " + dataset.columns().stream()
                    .map(Column::name).toList() + " have 0 records each): nothing to measure");
        }
        return records;
    }

    /**
     * Records per batch for a run over {@code dataset}: the {@code requested} number, at least 1 and at most all of the
     * dataset's records (a batch never holds more records than there are), so that reports never claim a batch larger
     * than the data.
     *
     * @param data the dataset's path, for messages
     * @param dataset the dataset
     * @param requested records per batch asked for (from a batch size in bytes or records)
     * @param notes where a note goes when the request is capped; may be null for no note
     * @return records per batch, {@code 1..min(requested, dataset records, Integer.MAX_VALUE)}
     * @throws IOException if the dataset holds no records (nothing to measure)
     */
    static int recordsPerBatch(Path data, Dataset dataset, long requested, List<String> notes) throws IOException {
        long records = requireRecords(data, dataset);
        long capped = Math.max(1, Math.min(Math.min(requested, records), Integer.MAX_VALUE));
        if (capped < requested && notes != null) {
            notes.add("note: a batch of " + requested + " records is more than the dataset's " + records
                    + "; each batch is capped at " + capped + " records");
        }
        return (int) capped;
    }

    private static BenchReport measure(BenchConfig config, BenchProgress log) throws IOException {
        Dataset dataset = Dataset.open(config.data(), config.loader().columns()); // empty: all columns
        long sampleBytes = dataset.columns().stream().mapToLong(Column::recordBytes).sum();
        List<String> notes = new ArrayList<>();
        int batchRecords = recordsPerBatch(config.data(), dataset, config.batchBytes() / Math.max(1, sampleBytes), notes);
        List<ReadPath> paths = choosePaths(config, dataset, notes);
        smallRecordsDirectNote(dataset, config.loader(), paths).ifPresent(notes::add);
        SamplerOptions sampler = config.loader().sampler();
        boolean gatherCeiling = sampler.shuffle() == Shuffle.GLOBAL && Cuda.availability().available();

        log.start((config.verify() ? 1 : 0) + (config.rounds() + 1) + config.rounds() * paths.size()
                + (Cuda.availability().available() ? 1 : 0) + (gatherCeiling ? 1 : 0));
        long[][] expected = null;
        if (config.verify()) {
            log.step("computing expected CRC32C of every batch from the files");
            expected = Checksums.expected(dataset, plans(dataset, sampler, batchRecords));
        }
        PageCache.sync(); // dirty pages would make the first O_DIRECT reads pay for their writeback
        String dropFailure = config.dropCaches() ? PageCache.drop() : "not requested";
        boolean cold = dropFailure == null;
        if (config.dropCaches() && !cold) {
            notes.add("note: " + dropFailure);
        }
        // ceilings[r] is measured before round r and ceilings[r + 1] after it; storage under a VM drifts, so a
        // round's ceiling is the faster of the two around it
        double[] ceilings = new double[config.rounds() + 1];
        DirectReadCeiling.Result first = ceiling(config, dataset, log, 0);
        ceilings[0] = first.gigabytesPerSecond();
        List<List<PathRun>> byPath = new ArrayList<>();
        paths.forEach(p -> byPath.add(new ArrayList<>()));
        for (int round = 0; round < config.rounds(); round++) {
            for (int k = 0; k < paths.size(); k++) {
                int i = (k + round) % paths.size();
                boolean rowCold = config.dropCaches() && PageCache.drop() == null;
                log.step("round " + (round + 1) + ": path " + paths.get(i));
                byPath.get(i).add(runPath(config, dataset, paths.get(i), batchRecords, expected, rowCold, notes));
            }
            if (config.dropCaches()) {
                PageCache.drop();
            }
            ceilings[round + 1] = ceiling(config, dataset, log, round + 1).gigabytesPerSecond();
        }
        double[] roundCeiling = new double[config.rounds()];
        for (int r = 0; r < roundCeiling.length; r++) {
            roundCeiling[r] = Math.max(ceilings[r], ceilings[r + 1]);
        }
        notes.add("raw O_DIRECT ceiling measurements, GB/s: " + java.util.Arrays.stream(ceilings)
                .mapToObj(c -> String.format(java.util.Locale.ROOT, "%.3f", c)).toList()
                + " (before and after each round; a round's ceiling is the faster of its two)");
        double pinned = 0;
        if (Cuda.availability().available()) {
            log.step("measuring the host-to-device copy ceilings and the naive baseline");
            CopyCeilings.Result copies = CopyCeilings.measure();
            pinned = copies.pinnedGbps();
            if (config.dropCaches()) {
                PageCache.drop();
            }
            double naive = NaiveBaseline.gigabytesPerSecond(dataset, batchRecords);
            notes.add(String.format(java.util.Locale.ROOT, "host-to-device copy ceilings: pinned %.1f GB/s, pageable %.1f GB/s; "
                    + "naive baseline (buffered read into a Java byte[], synchronous cudaMemcpy, %s): %.3f GB/s",
                    copies.pinnedGbps(), copies.pageableGbps(), config.dropCaches() ? "cold" : "warm", naive));
            notes.add("x ceiling of a device path: over the lower of the raw read and the pinned host-to-device copy");
        }
        GatherCeiling.Result gather = null;
        if (gatherCeiling) {
            log.step("measuring the gather ceiling (random records from pinned host memory by a kernel)");
            gather = gather(dataset, batchRecords, sampler.seed(), config.loader().prefetchDepth(), notes);
        }
        List<BenchRow> rows = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            double[] relevant = roundCeiling.clone();
            if (pinned > 0 && paths.get(i) != ReadPath.HOST) {
                for (int r = 0; r < relevant.length; r++) {
                    relevant[r] = Math.min(relevant[r], pinned);
                }
            }
            BenchRow row = row(paths.get(i), byPath.get(i), relevant);
            rows.add(row);
            if (gather != null && paths.get(i) != ReadPath.HOST) {
                notes.add(String.format(java.util.Locale.ROOT, "%s: %.0f records/s, %.2f x gather ceiling", row.requested(),
                        row.gbps() * 1e9 / sampleBytes, row.gbps() / gather.gigabytesPerSecond()));
            }
        }
        if (config.rounds() == 1 && rows.stream().anyMatch(r -> Double.isFinite(r.heapBytesPerBatch()))) {
            notes.add("heap B/batch of one round includes the JVM's one-time costs (class loading, method handle linkage): "
                    + "--rounds 3 reports the lowest of three");
        }
        String order = sampler.shuffle() == Shuffle.NONE ? "sequential" : sampler.shuffle() + " shuffle, seed " + sampler.seed();
        return new BenchReport(dataset.dataBytes(), batchRecords, config.rounds(), Stats.median(roundCeiling),
                first.direct(), cold, rows, notes, order, gather);
    }

    /**
     * The reads of each batch of epoch 0 under {@code sampler}, as every path's loader delivers them.
     *
     * @param dataset the dataset
     * @param sampler the run's sampler options
     * @param batchRecords records per batch
     * @return one entry per batch
     */
    static List<BatchReads> plans(Dataset dataset, SamplerOptions sampler, int batchRecords) {
        if (sampler.shuffle() == Shuffle.NONE && sampler.worldSize() == 1) {
            return BatchReads.sequential(dataset, batchRecords, sampler.dropLast());
        }
        long[] shardRecords = dataset.columns().get(0).shards().stream().mapToLong(RecordLayout::recordCount).toArray();
        EpochOrder order = new Sampler(sampler, shardRecords, batchRecords).order(0);
        return BatchReads.epoch(dataset, order, batchRecords, sampler.dropLast());
    }

    /**
     * The gather ceiling of the dataset's columns: each column's record size measured alone, combined as the time a
     * sample's records of every column take together; each writes {@code depth} batch buffers in turn, as the loader's
     * ring of that many slots is written.
     */
    private static GatherCeiling.Result gather(Dataset dataset, int batchRecords, long seed, int depth, List<String> notes) {
        double secondsPerSample = 0;
        long sampleBytes = 0;
        boolean exact = true;
        GatherCeiling.Result last = null;
        for (Column c : dataset.columns()) {
            long source = Math.min(GatherCeiling.DEFAULT_SOURCE_BYTES, Math.max(c.recordBytes(), c.recordBytes() * c.recordCount()));
            last = GatherCeiling.measure(c.recordBytes(), batchRecords, source, seed, depth);
            secondsPerSample += 1 / last.recordsPerSecond();
            sampleBytes += c.recordBytes();
            exact &= last.byteExact();
            notes.add(String.format(java.util.Locale.ROOT, "gather ceiling, column '%s': %d-byte records, %.3f GB/s, %.0f records/s"
                    + " (%d records of pinned host memory in a random order, %d per launch into %d batch buffers in turn, "
                    + "%d epochs)%s", c.name(),
                    c.recordBytes(), last.gigabytesPerSecond(), last.recordsPerSecond(), last.sourceRecords(),
                    last.batchRecords(), last.destinations(), last.epochs(),
                    last.byteExact() ? "" : "; the last batch was NOT byte-exact"));
        }
        if (dataset.columns().size() == 1) {
            return last;
        }
        double perSecond = 1 / secondsPerSample;
        return new GatherCeiling.Result(sampleBytes, last.sourceRecords(), last.batchRecords(), last.epochs(),
                perSecond * sampleBytes / 1e9, perSecond, exact, depth);
    }

    private static BenchRow row(ReadPath path, List<PathRun> runs, double[] roundCeiling) {
        double cpu = Stats.median(runs.stream().mapToDouble(PathRun::cpuSecondsPerGigabyte).toArray());
        double[] gbps = runs.stream().mapToDouble(r -> r.stats().gigabytesPerSecond()).toArray();
        double[] ratio = new double[runs.size()];
        for (int r = 0; r < ratio.length; r++) {
            ratio[r] = roundCeiling[r] == 0 ? 0 : gbps[r] / roundCeiling[r];
        }
        String checksum = runs.stream().map(PathRun::checksum).filter(c -> !c.equals("OK")).findFirst().orElse("OK");
        PathRun last = runs.get(runs.size() - 1);
        return new BenchRow(path, last.stats().path(), Stats.median(gbps), Stats.min(gbps), Stats.max(gbps),
                last.stats().batches(), Stats.median(runs.stream().mapToDouble(r -> r.stats().stallMillis()).toArray()),
                checksum, Stats.median(ratio), runs.stream().allMatch(PathRun::cold), cpu,
                lowest(runs.stream().mapToDouble(PathRun::heapBytesPerBatch).toArray()));
    }

    /**
     * @param heapPerBatch each round's heap bytes per batch (NaN where unknown)
     * @return the lowest known one, NaN if none: the steady state, since a process's first rounds also pay the JVM's
     *     one-time costs (class loading, linking and customising method handles of the native calls)
     */
    static double lowest(double[] heapPerBatch) {
        return java.util.Arrays.stream(heapPerBatch).filter(Double::isFinite).min().orElse(Double.NaN);
    }

    private static List<ReadPath> choosePaths(BenchConfig config, Dataset dataset, List<String> notes) {
        if (!config.paths().isEmpty()) {
            return config.paths();
        }
        List<ReadPath> paths = new ArrayList<>();
        if (!Cuda.availability().available()) {
            notes.add("no GPU path ran: CUDA is not available: " + Cuda.availability().reason());
        } else {
            CuFileStatus st = CuFileProbe.probe(Optional.of(dataset.root()));
            if (st.usable()) {
                paths.add(ReadPath.GDS);
            } else {
                notes.add("GDS path not run: " + st.reason());
            }
            paths.add(ReadPath.BOUNCE);
            mappedPath().ifPresent(paths::add);
        }
        paths.add(ReadPath.HOST);
        return paths;
    }

    /** Records smaller than this, read one {@code O_DIRECT} request each under a global shuffle, get a note. */
    static final long SMALL_RECORD_BYTES = 64 << 10;

    /**
     * The note for a run whose staged paths read small records of a global shuffle with {@code O_DIRECT}: each record
     * is then a separate read of its 4 KiB-aligned cover from the device (measured here, 784-byte records: 13x slower
     * than buffered reads from the page cache; ~70x on other machines), which the table alone does not explain.
     *
     * @param dataset the dataset
     * @param loader the options every path runs with
     * @param paths the paths run
     * @return one line saying why and what to use instead, or empty where it does not apply (no global shuffle,
     *     buffered reads, no HOST or BOUNCE path, or every record at least {@link #SMALL_RECORD_BYTES})
     */
    static Optional<String> smallRecordsDirectNote(Dataset dataset, dev.gdsloader.loader.LoaderOptions loader,
                                                   List<ReadPath> paths) {
        long smallest = dataset.columns().stream().mapToLong(Column::recordBytes).min().orElse(SMALL_RECORD_BYTES);
        List<ReadPath> staged = paths.stream().filter(p -> p == ReadPath.HOST || p == ReadPath.BOUNCE).toList();
        if (loader.sampler().shuffle() != Shuffle.GLOBAL || !Boolean.TRUE.equals(loader.directIo()) || staged.isEmpty()
                || smallest >= SMALL_RECORD_BYTES) {
            return Optional.empty();
        }
        return Optional.of("note: --shuffle global with O_DIRECT: every " + smallest + "-byte record is a separate aligned read "
                + "of at least 4 KiB from the device, so " + staged.stream().map(ReadPath::name).collect(
                        java.util.stream.Collectors.joining(" and ")) + " run far below the sequential rate; for records this "
                + "small use --no-direct (buffered: served from the page cache) or, on a GPU, MAPPED");
    }

    /**
     * {@code ReadPath.MAPPED} where this build has it (looked up by name, so this code builds before and after it is
     * added), for the default path lists of the benchmarks.
     *
     * @return MAPPED, or empty where this build lacks it
     */
    public static Optional<ReadPath> mappedPath() {
        return java.util.Arrays.stream(ReadPath.values()).filter(p -> p.name().equals("MAPPED")).findFirst();
    }

    private record PathRun(ReadPath requested, LoaderStats stats, String checksum, boolean cold, double cpuSecondsPerGigabyte,
                           double heapBytesPerBatch) {
    }

    private static DirectReadCeiling.Result ceiling(BenchConfig config, Dataset dataset, BenchProgress log, int index)
            throws IOException {
        log.step("measuring the raw O_DIRECT read ceiling (" + (index + 1) + " of " + (config.rounds() + 1) + ", "
                + config.loader().ioThreads() + " threads, " + config.loader().maxIoBytes() / 1024 + " KiB requests)");
        return DirectReadCeiling.measure(dataset, config.loader().ioThreads(), config.loader().maxIoBytes());
    }

    private static PathRun runPath(BenchConfig config, Dataset dataset, ReadPath path, int batchRecords, long[][] expected,
                                   boolean cold, List<String> notes) throws IOException {
        long maxColumn = dataset.columns().stream().mapToLong(c -> c.recordBytes() * batchRecords).max().orElse(1);
        try (GdsLoader loader = GdsLoader.builder(dataset).options(config.loader().withBatchSize(batchRecords).withPath(path))
                .build();
             VerifyingConsumer consumer = new VerifyingConsumer(expected, maxColumn, loader.pathTaken().onDevice())) {
            // steady state: the batches after the first prefetch-depth ones (the ring's first fill), at least one
            int warm = (int) Math.min(loader.slots(), loader.batchesPerEpoch() - 1L);
            long cpu0 = CpuTime.processNanos();
            long checking = 0; // CPU time of the bench's own readback and CRC on this thread, not the loader's
            long checkingHeap = 0; // heap bytes of that, in steady state
            LoaderHeap heap = null;
            long n = 0;
            for (Batch b : loader) {
                if (n++ == warm) {
                    heap = LoaderHeap.start();
                }
                long t0 = verify(expected);
                long h0 = LoaderHeap.consumerBytes();
                consumer.check(b);
                checkingHeap += LoaderHeap.consumerBytes() - h0;
                checking += verify(expected) - t0;
                consumer.release(b);
                if (heap == null) {
                    checkingHeap = 0;
                }
            }
            double heapPerBatch = heap == null || n <= warm ? Double.NaN : heap.end(checkingHeap) / (double) (n - warm);
            long tail = consumer.drain(); // the last batches land: their time counts
            long cpu1 = CpuTime.processNanos();
            LoaderStats s = loader.stats();
            if (tail > 0) {
                s = s.withWallNanos(s.wallNanos() + tail);
            }
            if (cold && s.registrationNanos() > 0) {
                // a cold MAPPED epoch 0 reads its shards while the build maps and registers them: that time counts
                notes.add(String.format(java.util.Locale.ROOT, "%s: cold GB/s includes the %.3f s the loader's build spent "
                        + "mapping and registering (reading) the shards", path, s.registrationNanos() / 1e9));
                s = s.withWallNanos(s.wallNanos() + s.registrationNanos());
            }
            double cpu = CpuTime.secondsPerGigabyte(cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0 - checking, s.bytes());
            if (consumer.firstMismatch() != null) {
                notes.add(path + ": first mismatch: " + consumer.firstMismatch());
            }
            return new PathRun(path, s, consumer.verdict(), cold, cpu, heapPerBatch);
        }
    }

    /** @return this thread's CPU time when batches are checked (then it is the checker's, to take out), else 0 */
    private static long verify(long[][] expected) {
        return expected == null ? 0 : Math.max(0, CpuTime.threadNanos());
    }
}
