package dev.gdsloader.cli;

import dev.gdsloader.bench.BenchConfig;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options every benchmark run shares (picocli mixin of {@code bench} and {@code sweep}), and the
 * {@link BenchConfig} they make: the loader flags become one {@link LoaderOptions}, checked there.
 */
final class BenchOptions {
    /** --threads and --depth as the loader options check them (the usage message for a value past int names it). */
    static final Checks.Range THREADS = new Checks.Range("--threads", 1, LoaderOptions.MAX_IO_THREADS);
    static final Checks.Range DEPTH = new Checks.Range("--depth", 1, LoaderOptions.MAX_PREFETCH_DEPTH);
    /** Declared so that a value beyond an int names this range ({@link BenchConfig} checks it). */
    static final Checks.Range ROUNDS = new Checks.Range("--rounds", 1, dev.gdsloader.bench.BenchConfig.MAX_ROUNDS);
    /** The ranges above, for the commands that hold these options ({@link RangedOptions#ranges()}). */
    static final List<Checks.Range> RANGES = List.of(THREADS, DEPTH, ROUNDS);

    @Option(names = "--paths", split = ",", description = "paths to run: MAPPED, GDS, BOUNCE, HOST (default: all available)")
    List<ReadPath> paths = List.of();

    @Option(names = "--shuffle", defaultValue = "none", converter = ShuffleConverter.class,
            description = "record order of every path: none (sequential), global (a random permutation of all records; "
                    + "on a GPU the gather ceiling is measured too) or shard-blocks (default: ${DEFAULT-VALUE})")
    Shuffle shuffle;

    @Option(names = "--seed", description = "seed of --shuffle global or shard-blocks (default: 42)")
    Long seed; // null: not given (42); refused without a shuffle, where it would change nothing

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
     * ceiling phases, and a path named twice (it would be measured twice).
     *
     * @throws IllegalArgumentException naming the option and the reason
     */
    void requireGpuForPaths() {
        java.util.Set<ReadPath> seen = java.util.EnumSet.noneOf(ReadPath.class);
        for (ReadPath p : paths) {
            if (!seen.add(p)) {
                throw new IllegalArgumentException("--paths names " + p + " twice: give each path once");
            }
        }
        for (ReadPath p : paths) {
            if (needsGpu(p) && !dev.gdsloader.cuda.Cuda.availability().available()) {
                throw new IllegalArgumentException("--paths " + p + " needs a GPU: CUDA is not available: "
                        + dev.gdsloader.cuda.Cuda.availability().reason() + " (HOST runs without one)");
            }
        }
    }

    /**
     * @param p a path
     * @return true for the paths that deliver into GPU memory (GDS, BOUNCE, and MAPPED where this build has it)
     */
    static boolean needsGpu(ReadPath p) {
        return p == ReadPath.GDS || p == ReadPath.BOUNCE || p.name().equals("MAPPED");
    }

    /** {@code --shuffle}: a {@link Shuffle} by name, any case, '-' for '_' ({@code shard-blocks}). */
    static final class ShuffleConverter implements picocli.CommandLine.ITypeConverter<Shuffle> {
        @Override
        public Shuffle convert(String value) {
            try {
                return Shuffle.valueOf(value.trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException("'" + value
                        + "' is not a shuffle: use none, global or shard-blocks");
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
        if (seed != null && shuffle == Shuffle.NONE) {
            throw new IllegalArgumentException("--seed " + seed + " given without --shuffle global or shard-blocks: "
                    + "a sequential run has no order to seed");
        }
        LoaderOptions loader = LoaderOptions.defaults().withDirectIo(!noDirect)
                .withSampler(SamplerOptions.sequential().withShuffle(shuffle, seed == null ? 42 : seed));
        loader = Checks.loaderOption("--threads", t, loader::withIoThreads);
        loader = Checks.loaderOption("--io-size", io, loader::withMaxIoBytes);
        loader = Checks.loaderOption("--depth", d, loader::withPrefetchDepth);
        return new BenchConfig(data, paths, batchBytes, loader, dropCaches, !noVerify, rounds);
    }
}
