package dev.gdsloader.cli;

import dev.gdsloader.bench.BenchConfig;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.ReadPath;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options every benchmark run shares (picocli mixin of {@code bench} and {@code sweep}), and the
 * {@link BenchConfig} they make: the loader flags become one {@link LoaderOptions}, checked there.
 */
final class BenchOptions {
    @Option(names = "--paths", split = ",", description = "paths to run: GDS, BOUNCE, HOST (default: all available)")
    List<ReadPath> paths = List.of();

    @Option(names = "--batch-bytes", defaultValue = "64MiB", converter = ByteSize.class,
            description = "target bytes per batch (default: ${DEFAULT-VALUE})")
    long batchBytes;

    @Option(names = "--threads", defaultValue = "4", description = "I/O threads (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--io-size", defaultValue = "8MiB", converter = ByteSize.class,
            description = "largest single read (default: ${DEFAULT-VALUE})")
    long ioSize;

    @Option(names = "--depth", defaultValue = "4", description = "prefetch depth, slots; 1 = no overlap (default: ${DEFAULT-VALUE})")
    int depth;

    @Option(names = "--drop-caches", description = "drop the page cache before the ceiling and each path (root)")
    boolean dropCaches;

    @Option(names = "--rounds", defaultValue = "1",
            description = "run every path this many times, rotating their order; medians are reported (default: ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--no-direct", description = "staged paths read buffered (page cache) instead of O_DIRECT")
    boolean noDirect;

    @Option(names = "--no-verify", description = "skip checking every batch against the CRC32C of its file bytes")
    boolean noVerify;

    /**
     * Refuses {@code --paths GDS} or {@code BOUNCE} up front where there is no GPU, rather than after the CRC and
     * ceiling phases.
     *
     * @throws IllegalArgumentException naming the option and the reason
     */
    void requireGpuForPaths() {
        for (ReadPath p : paths) {
            if ((p == ReadPath.GDS || p == ReadPath.BOUNCE) && !dev.gdsloader.cuda.Cuda.availability().available()) {
                throw new IllegalArgumentException("--paths " + p + " needs a GPU: CUDA is not available: "
                        + dev.gdsloader.cuda.Cuda.availability().reason() + " (HOST runs without one)");
            }
        }
    }

    /**
     * Caps {@code --batch-bytes} at the whole dataset, saying so, so one batch of all records is used rather than
     * slots sized for bytes that do not exist.
     *
     * @param datasetBytes record bytes of the dataset
     * @param out where the note goes
     */
    void capBatchAt(long datasetBytes, java.io.PrintStream out) {
        if (datasetBytes > 0 && batchBytes > datasetBytes) {
            out.println("note: --batch-bytes " + ByteSize.format(batchBytes) + " is more than the dataset's "
                    + ByteSize.format(datasetBytes) + " of records; each batch is capped at all of its records");
            batchBytes = datasetBytes;
        }
    }

    /**
     * @param data the dataset
     * @return the run these options describe
     * @throws IllegalArgumentException naming the first invalid option
     */
    BenchConfig config(Path data) {
        return config(data, threads, ioSize, depth);
    }

    /**
     * @param data the dataset
     * @param t I/O threads
     * @param io largest read, bytes
     * @param d prefetch depth
     * @return the run these options describe, with threads, read size and depth given (a sweep varies them)
     * @throws IllegalArgumentException naming the first invalid option: the flag and the loader option's own check
     */
    BenchConfig config(Path data, int t, long io, int d) {
        LoaderOptions loader = LoaderOptions.defaults().withDirectIo(!noDirect);
        loader = Checks.loaderOption("--threads", t, loader::withIoThreads);
        loader = Checks.loaderOption("--io-size", io, loader::withMaxIoBytes);
        loader = Checks.loaderOption("--depth", d, loader::withPrefetchDepth);
        return new BenchConfig(data, paths, batchBytes, loader, dropCaches, !noVerify, rounds);
    }
}
