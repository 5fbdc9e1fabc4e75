package dev.gdsloader.cli;

import dev.gdsloader.bench.OverlapBench;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader overlap}: how well I/O hides behind the consumer's GPU compute.
 */
@Command(name = "overlap", mixinStandardHelpOptions = true,
        description = "Run epochs where the consumer's stream runs a kernel of t_c per batch (t_c = factors x t_io, "
                + "t_io measured first without compute) and print epoch time over max(t_c, t_io) x batches (1.00 = perfect overlap). "
                + "Needs a GPU.")
final class OverlapCommand implements Callable<Integer> {
    @Parameters(arity = "1", description = "dataset directory")
    Path data;

    @Option(names = "--path", defaultValue = "BOUNCE", description = "GDS or BOUNCE (default: ${DEFAULT-VALUE})")
    ReadPath path;

    @Option(names = "--batch-size", defaultValue = "445", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--factors", split = ",", defaultValue = "0.5,0.9,1.0,1.1,2.0",
            description = "t_c as multiples of t_io (default: ${DEFAULT-VALUE})")
    List<Double> factors;

    @Option(names = "--depth", defaultValue = "4", description = "prefetch depth, slots 1..64 (default: ${DEFAULT-VALUE})")
    int depth;

    @Option(names = "--no-direct", description = "buffered reads (page cache) instead of O_DIRECT: a steadier t_io")
    boolean noDirect;

    @Override
    public Integer call() throws Exception {
        Checks.BATCH_SIZE.check(batchSize);
        LoaderOptions options = Checks.loaderOption("--depth", depth,
                LoaderOptions.defaults().withBatchSize(batchSize).withPath(path).withDirectIo(!noDirect)::withPrefetchDepth);
        for (double x : factors) {
            if (!(x > 0) || Double.isInfinite(x)) {
                throw new IllegalArgumentException("--factors must all be > 0, got " + x);
            }
        }
        double[] f = factors.stream().mapToDouble(Double::doubleValue).toArray();
        OverlapBench.print(OverlapBench.run(data, options, f, System.out), System.out);
        return 0;
    }
}
