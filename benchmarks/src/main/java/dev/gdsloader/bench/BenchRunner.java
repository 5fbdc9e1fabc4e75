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
        long records = dataset.recordCount();
        if (records == 0) {
            throw new IOException(data + ": the dataset holds no records (its columns " + dataset.columns().stream()
                    .map(Column::name).toList() + " have 0 records each): nothing to measure");
        }
        long capped = Math.max(1, Math.min(Math.min(requested, records), Integer.MAX_VALUE));
        if (capped < requested && notes != null) {
            notes.add("note: a batch of " + requested + " records is more than the dataset's " + records
                    + "; each batch is capped at " + capped + " records");
        }
        return (int) capped;
    }

    private static BenchReport measure(BenchConfig config, BenchProgress log) throws IOException {
        Dataset dataset = Dataset.open(config.data());
        long sampleBytes = dataset.columns().stream().mapToLong(Column::recordBytes).sum();
        List<String> notes = new ArrayList<>();
        int batchRecords = recordsPerBatch(config.data(), dataset, config.batchBytes() / Math.max(1, sampleBytes), notes);
        List<ReadPath> paths = choosePaths(config, dataset, notes);

        log.start((config.verify() ? 1 : 0) + (config.rounds() + 1) + config.rounds() * paths.size()
                + (Cuda.availability().available() ? 1 : 0));
        long[][] expected = null;
        if (config.verify()) {
            log.step("computing expected CRC32C of every batch from the files");
            expected = Checksums.expected(dataset, ReadPlanner.sequential(dataset, batchRecords, false));
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
        List<BenchRow> rows = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            double[] relevant = roundCeiling.clone();
            if (pinned > 0 && paths.get(i) != ReadPath.HOST) {
                for (int r = 0; r < relevant.length; r++) {
                    relevant[r] = Math.min(relevant[r], pinned);
                }
            }
            rows.add(row(paths.get(i), byPath.get(i), relevant));
        }
        return new BenchReport(dataset.dataBytes(), batchRecords, config.rounds(), Stats.median(roundCeiling),
                first.direct(), cold, rows, notes);
    }

    private static BenchRow row(ReadPath path, List<PathRun> runs, double[] roundCeiling) {
        double[] gbps = runs.stream().mapToDouble(r -> r.stats().gigabytesPerSecond()).toArray();
        double[] ratio = new double[runs.size()];
        for (int r = 0; r < ratio.length; r++) {
            ratio[r] = roundCeiling[r] == 0 ? 0 : gbps[r] / roundCeiling[r];
        }
        String checksum = runs.stream().map(PathRun::checksum).filter(c -> !c.equals("OK")).findFirst().orElse("OK");
        PathRun last = runs.get(runs.size() - 1);
        return new BenchRow(path, last.stats().path(), Stats.median(gbps), Stats.min(gbps), Stats.max(gbps),
                last.stats().batches(), Stats.median(runs.stream().mapToDouble(r -> r.stats().stallMillis()).toArray()),
                checksum, Stats.median(ratio), runs.stream().allMatch(PathRun::cold));
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
