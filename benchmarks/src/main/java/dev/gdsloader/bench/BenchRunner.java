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
        log.println("measuring the raw O_DIRECT read ceiling (" + config.ioThreads() + " threads, "
                + config.maxIoBytes() / 1024 + " KiB requests) ...");
        DirectReadCeiling.Result ceiling = DirectReadCeiling.measure(dataset, config.ioThreads(), config.maxIoBytes());

        List<BenchRow> rows = new ArrayList<>();
        for (ReadPath p : paths) {
            boolean rowCold = config.dropCaches() && PageCache.drop() == null;
            log.println("running path " + p + " ...");
            rows.add(runPath(config, dataset, p, batchRecords, expected, ceiling, rowCold, notes));
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

    private static BenchRow runPath(BenchConfig config, Dataset dataset, ReadPath path, int batchRecords, long[][] expected,
                                    DirectReadCeiling.Result ceiling, boolean cold, List<String> notes) throws IOException {
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
            double ratio = ceiling.gigabytesPerSecond() == 0 ? 0 : s.gigabytesPerSecond() / ceiling.gigabytesPerSecond();
            return new BenchRow(path, loader.pathTaken(), s, consumer.verdict(), ratio, cold);
        }
    }
}
