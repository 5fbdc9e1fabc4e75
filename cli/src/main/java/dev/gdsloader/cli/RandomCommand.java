package dev.gdsloader.cli;

import dev.gdsloader.bench.RandomReadBench;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.ReadPath;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader random}: sample-level shuffle against the storage's random-read rate.
 */
@Command(name = "random", mixinStandardHelpOptions = true,
        description = "Read every record of a one-column dataset once in a random order: O_DIRECT pread threads "
                + "(the ceiling), then the loader with a global shuffle on each path; print records/s, GB/s and the ratio.")
final class RandomCommand implements Callable<Integer> {
    @Parameters(arity = "1", description = "dataset directory with one column (e.g. generate --record-bytes 4096 --align 4096)")
    Path data;

    @Option(names = "--paths", split = ",", description = "loader paths (default: GDS,BOUNCE with a GPU, else HOST)")
    List<ReadPath> paths;

    @Option(names = "--threads", defaultValue = "16", description = "I/O threads (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--batch-size", defaultValue = "256", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--drop-caches", description = "drop the page cache before each measurement (root)")
    boolean dropCaches;

    @Override
    public Integer call() throws Exception {
        Checks.range("--threads", threads, 1, 256); // before the table header and the ceiling phase
        Checks.range("--batch-size", batchSize, 1, Integer.MAX_VALUE);
        if (paths != null) {
            BenchOptions o = new BenchOptions();
            o.paths = paths;
            o.requireGpuForPaths();
        }
        List<ReadPath> p = paths != null ? paths
                : Cuda.availability().available() ? List.of(ReadPath.GDS, ReadPath.BOUNCE) : List.of(ReadPath.HOST);
        RandomReadBench.run(data, p, threads, batchSize, dropCaches, System.out);
        return 0;
    }
}
