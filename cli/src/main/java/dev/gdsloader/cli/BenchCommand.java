package dev.gdsloader.cli;

import dev.gdsloader.bench.BenchConfig;
import dev.gdsloader.bench.BenchReport;
import dev.gdsloader.bench.BenchRunner;
import dev.gdsloader.bench.SyntheticDataset;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader bench}: the main job. Loads a dataset through every available path, checks every
 * batch byte-exact after it reached its destination, and prints GB/s per path next to the raw
 * {@code O_DIRECT} ceiling of the same data in the same run.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Load a dataset through every available path (MAPPED, GDS, BOUNCE, HOST), verify every batch, "
                + "and print GB/s (1e9 bytes/s) per path next to the raw O_DIRECT read ceiling. "
                + "Without DATA it generates ~1 GiB of shards in a temporary directory and deletes them afterwards.")
final class BenchCommand implements Callable<Integer>, RangedOptions {
    @Parameters(arity = "0..1", description = "dataset directory: shards of any format the loader reads (npy, npz, raw, "
            + "safetensors, arrow), or a dataset.json's directory (default: generated .npy shards)")
    Path data;

    @Option(names = "--size", defaultValue = "1GiB", converter = ByteSize.class,
            description = "size of the generated dataset when DATA is not given (default: ${DEFAULT-VALUE})")
    long size;

    @Option(names = "--work-dir", description = "where to generate the dataset (default: java.io.tmpdir)")
    Path workDir;

    @picocli.CommandLine.Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--out", description = "also write bench.json, bench.csv, bench.md and bench.png (GB/s by path) here")
    Path out;

    @Option(names = "--quick", description = "a small run (128 MiB generated, 16 MiB batches; --rounds still applies) that ends in well under a minute without a GPU")
    boolean quick;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public java.util.List<Checks.Range> ranges() {
        return BenchOptions.RANGES;
    }

    @Override
    public Integer call() throws IOException {
        if (quick) {
            size = Math.min(size, 128L << 20);
            options.batchBytes = Math.min(options.batchBytes, 16L << 20);
            // --rounds is honoured (default 1) and validated below like every other option
        }
        if (data != null && spec != null && spec.commandLine().getParseResult().hasMatchedOption("--size")) {
            throw new IllegalArgumentException("--size: sets the data bench generates when no DIR is given; with " + data
                    + " it would be ignored: drop it, or drop DIR");
        }
        options.config(data != null ? data : Path.of(".")); // validates the options before anything is written
        options.requireGpuForPaths();
        Path base = workDir != null ? workDir : Path.of(System.getProperty("java.io.tmpdir"));
        if (data == null) {
            Checks.range("--size", size, 1L * 8 * 150528, Long.MAX_VALUE);
            if (!Files.isDirectory(base)) {
                throw new IllegalArgumentException("--work-dir " + base + ": not an existing directory");
            }
            Checks.freeSpace(size, base);
        }
        if (out != null) {
            Checks.usableOutputDir("--out", out);
        }
        if (data != null) {
            List<String> columns = ArrowColumns.loadable(data, System.out); // all but dictionary-encoded Arrow columns
            options.capBatchAt(dev.gdsloader.loader.dataset.Dataset.open(data, columns).dataBytes(), System.out);
            BenchConfig c = options.config(data);
            return report(new BenchConfig(c.data(), c.paths(), c.batchBytes(), c.loader().withColumns(columns), c.dropCaches(),
                    c.verify(), c.rounds()));
        }
        options.capBatchAt(size / 8 / 150528 * 150528 * 8, System.out);
        Path generated = Files.createTempDirectory(base, "gdsloader-bench-");
        Thread cleanup = new Thread(() -> deleteQuietly(generated), "gdsloader-bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup); // also on Ctrl-C
        try {
            System.out.println("generating " + ByteSize.format(size) + " of synthetic .npy shards in " + generated + " ...");
            SyntheticDataset.generate(generated, size, 8, 150528, 42);
            return report(options.config(generated));
        } finally {
            deleteQuietly(generated);
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
    }

    private int report(BenchConfig config) throws IOException {
        BenchReport r = BenchRunner.run(config, new TerminalProgress("bench"));
        r.print(System.out);
        if (out != null) {
            String command = "gdsloader " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
            System.out.println("wrote " + dev.gdsloader.bench.ReportWriter.write(r, command, out));
        }
        return r.allChecksumsOk() ? 0 : 1;
    }

    private static void deleteQuietly(Path dir) {
        try {
            deleteTree(dir);
        } catch (IOException e) {
            System.err.println("gdsloader bench: could not delete " + dir + ": " + e.getMessage());
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
