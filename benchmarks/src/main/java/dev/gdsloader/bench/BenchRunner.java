package dev.gdsloader.bench;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderStats;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ReadPlanner;
import java.io.IOException;
import java.io.PrintStream;
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
        Dataset dataset = Dataset.open(config.data());
        long sampleBytes = dataset.columns().stream().mapToLong(Column::recordBytes).sum();
        int batchRecords = (int) Math.max(1, Math.min(Integer.MAX_VALUE, config.batchBytes() / sampleBytes));
        List<String> notes = new ArrayList<>();
        List<ReadPath> paths = choosePaths(config, dataset, notes);

        long[][] expected = null;
        if (config.verify()) {
            log.println("computing expected CRC32C of every batch from the files ...");
            expected = Checksums.expected(dataset, ReadPlanner.sequential(dataset, batchRecords, false));
        }
        PageCache.sync(); // dirty pages would make the first O_DIRECT reads pay for their writeback
        String dropFailure = config.dropCaches() ? PageCache.drop() : "not requested";
        boolean cold = dropFailure == null;
        if (config.dropCaches() && !cold) {
            notes.add("note: " + dropFailure);
        }
        DirectReadCeiling.Result before = ceiling(config, dataset, log, "before");
        List<PathRun> runs = new ArrayList<>();
        for (ReadPath p : paths) {
            boolean rowCold = config.dropCaches() && PageCache.drop() == null;
            log.println("running path " + p + " ...");
            runs.add(runPath(config, dataset, p, batchRecords, expected, rowCold, notes));
        }
        if (config.dropCaches()) {
            PageCache.drop();
        }
        DirectReadCeiling.Result after = ceiling(config, dataset, log, "after");
        // the storage under a VM drifts between measurements: the faster of the two is the ceiling
        DirectReadCeiling.Result ceiling = before.gigabytesPerSecond() >= after.gigabytesPerSecond() ? before : after;
        notes.add(String.format(java.util.Locale.ROOT, "raw O_DIRECT ceiling: %.3f GB/s before the paths, %.3f GB/s after; "
                + "ratios use the faster", before.gigabytesPerSecond(), after.gigabytesPerSecond()));
        List<BenchRow> rows = new ArrayList<>();
        for (PathRun r : runs) {
            double ratio = ceiling.gigabytesPerSecond() == 0 ? 0 : r.stats().gigabytesPerSecond() / ceiling.gigabytesPerSecond();
            rows.add(new BenchRow(r.requested(), r.stats().path(), r.stats(), r.checksum(), ratio, r.cold()));
        }
        return new BenchReport(dataset.dataBytes(), batchRecords, ceiling, cold, rows, notes);
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
        }
        paths.add(ReadPath.HOST);
        return paths;
    }

    private record PathRun(ReadPath requested, LoaderStats stats, String checksum, boolean cold) {
    }

    private static DirectReadCeiling.Result ceiling(BenchConfig config, Dataset dataset, PrintStream log, String when)
            throws IOException {
        log.println("measuring the raw O_DIRECT read ceiling " + when + " the paths (" + config.ioThreads() + " threads, "
                + config.maxIoBytes() / 1024 + " KiB requests) ...");
        return DirectReadCeiling.measure(dataset, config.ioThreads(), config.maxIoBytes());
    }

    private static PathRun runPath(BenchConfig config, Dataset dataset, ReadPath path, int batchRecords, long[][] expected,
                                   boolean cold, List<String> notes) throws IOException {
        long maxColumn = dataset.columns().stream().mapToLong(c -> c.recordBytes() * batchRecords).max().orElse(1);
        try (GdsLoader loader = GdsLoader.builder(dataset).batchSize(batchRecords).path(path)
                .ioThreads(config.ioThreads()).maxIoBytes(config.maxIoBytes()).prefetchDepth(config.prefetchDepth()).build();
             VerifyingConsumer consumer = new VerifyingConsumer(expected, maxColumn, loader.pathTaken().onDevice())) {
            for (Batch b : loader) {
                consumer.accept(b);
            }
            LoaderStats s = loader.stats();
            if (consumer.firstMismatch() != null) {
                notes.add(path + ": first mismatch: " + consumer.firstMismatch());
            }
            return new PathRun(path, s, consumer.verdict(), cold);
        }
    }
}
