package dev.gdsloader.cli;

import dev.gdsloader.bench.RandomReadBench;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.dataset.Dataset;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader random}: sample-level shuffle against the storage's random-read rate, with the loader's
 * records/s, GB/s and process CPU seconds per GB per path (option names as {@code bench}'s where they mean the same).
 */
@Command(name = "random", mixinStandardHelpOptions = true,
        description = "Read every record of a one-column dataset once in a random order: pread threads "
                + "(the ceiling), then the loader with a global shuffle on each path, each batch released at once; "
                + "print records/s, GB/s (1e9 bytes/s), the ratio to the ceiling and process CPU seconds per GB.")
final class RandomCommand implements Callable<Integer>, RangedOptions {
    @Parameters(arity = "1", description = "dataset directory with one column (e.g. generate --record-bytes 4096 --align 4096)")
    Path data;

    @Option(names = "--paths", split = ",", description = "loader paths (default: GDS,BOUNCE (and MAPPED where built) with a GPU, else HOST)")
    List<ReadPath> paths;

    @Option(names = "--threads", defaultValue = "16", description = "I/O threads (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--batch-size", description = "records per batch (default: 256; not with --batch-bytes)")
    Integer batchSize;

    @Option(names = "--batch-bytes", converter = ByteSize.class,
            description = "target bytes per batch: records per batch = this / record bytes, at least 1 (not with --batch-size)")
    Long batchBytes;

    @Option(names = "--drop-caches", description = "drop the page cache before each measurement (root)")
    boolean dropCaches;

    @Option(names = "--no-direct", description = "buffered reads (page cache) for the ceiling and the staged paths (default: O_DIRECT ceiling, "
            + "the loader's own choice)")
    boolean noDirect;

    @Option(names = "--no-ceiling", description = "skip the pread ceiling and the gather ceiling; measure the loader paths only")
    boolean noCeiling;

    @Option(names = "--hot", description = "warm the page cache first (every shard read once, buffered, nothing dropped) "
            + "and read buffered; not with --drop-caches")
    boolean hot;

    @Option(names = "--no-gather-ceiling", description = "on a GPU, skip the gather ceiling (a kernel gathering random records "
            + "of the same size from pinned host memory), which is measured by default after the pread ceiling")
    boolean noGatherCeiling;

    @Option(names = "--rounds", defaultValue = "1",
            description = "rounds per path, rotating the path order, each a fresh loader timing --epochs epochs; medians are reported (default: ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--epochs", defaultValue = "1",
            description = "epochs each round's loader times, back to back (a training loop's epochs; default: ${DEFAULT-VALUE})")
    int epochs;

    @Option(names = "--warmup-epochs", defaultValue = "0",
            description = "epochs each round's loader runs untimed first (JIT, first touches; default: ${DEFAULT-VALUE})")
    int warmupEpochs;

    @Option(names = "--depth", defaultValue = "4", description = "the loader's prefetch depth, slots (default: ${DEFAULT-VALUE})")
    int depth;

    @Option(names = "--json", description = "also print each row as one JSON line (lines starting with '{')")
    boolean json;

    private static final Checks.Range THREADS = new Checks.Range("--threads", 1, 256);
    private static final Checks.Range ROUNDS = new Checks.Range("--rounds", 1, 1000);
    private static final Checks.Range EPOCHS = new Checks.Range("--epochs", 1, 1000);
    private static final Checks.Range WARMUP = new Checks.Range("--warmup-epochs", 0, 1000);
    private static final Checks.Range DEPTH = BenchOptions.DEPTH; // declared here too: out-of-int values name it

    @Override
    public java.util.List<Checks.Range> ranges() {
        return java.util.List.of(THREADS, ROUNDS, EPOCHS, WARMUP, DEPTH);
    }

    @Override
    public Integer call() throws Exception {
        THREADS.check(threads); // before the table header and the ceiling phase
        ROUNDS.check(rounds);
        EPOCHS.check(epochs);
        WARMUP.check(warmupEpochs);
        DEPTH.check(depth);
        if (hot && dropCaches) {
            throw new IllegalArgumentException("--hot and --drop-caches both given: --hot warms the page cache, --drop-caches empties it");
        }
        if (batchSize != null && batchBytes != null) {
            throw new IllegalArgumentException("--batch-size and --batch-bytes both given: use one");
        }
        if (batchSize != null) {
            Checks.BATCH_SIZE.check(batchSize);
        }
        if (batchBytes != null) {
            Checks.range("--batch-bytes", batchBytes, 1, Long.MAX_VALUE);
        }
        if (paths != null) {
            BenchOptions o = new BenchOptions();
            o.paths = paths;
            o.requireGpuForPaths();
        }
        List<ReadPath> p = paths != null ? paths
                : Cuda.availability().available() ? gpuDefaults() : List.of(ReadPath.HOST);
        int records = batchSize != null ? batchSize : 256;
        List<dev.gdsloader.loader.dataset.Column> columns = batchBytes != null ? Dataset.open(data).columns() : List.of();
        if (columns.size() == 1) { // more or fewer columns: the benchmark refuses the dataset, naming them
            records = (int) Math.max(1, Math.min(Integer.MAX_VALUE, batchBytes / Math.max(1, columns.get(0).recordBytes())));
        }
        RandomReadBench.run(new RandomReadBench.Config(data, p, threads, depth, records, (noDirect || hot) ? Boolean.FALSE : null,
                !noCeiling, dropCaches, rounds, hot, !noCeiling && !noGatherCeiling, epochs, warmupEpochs),
                json, System.out);
        return 0;
    }

    /** @return GDS, BOUNCE and, where this build has it, MAPPED */
    private static List<ReadPath> gpuDefaults() {
        List<ReadPath> p = new java.util.ArrayList<>(List.of(ReadPath.GDS, ReadPath.BOUNCE));
        dev.gdsloader.bench.BenchRunner.mappedPath().ifPresent(p::add);
        return p;
    }
}
