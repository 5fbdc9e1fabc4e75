package dev.gdsloader.cli;

import dev.gdsloader.bench.RanksBench;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader ranks}: one loader per GPU in one process, as ranks of one job.
 */
@Command(name = "ranks", mixinStandardHelpOptions = true,
        description = "Run rank r of W on GPU r, all in this process over the same dataset: rank 0 alone, then all at "
                + "once; check the ranks got disjoint records covering the dataset once. Exit 1 if not.")
final class RanksCommand implements Callable<Integer>, RangedOptions {
    @Parameters(arity = "1", description = "dataset directory")
    Path data;

    @Option(names = "--world", description = "ranks (default: every GPU, at least 2; ranks share GPUs when there are fewer)")
    Integer world;

    private static final Checks.Range WORLD = new Checks.Range("--world", 1, 1024);

    @Option(names = "--path", defaultValue = "BOUNCE", description = "read path: GDS, BOUNCE or AUTO, each onto its rank's GPU (default: ${DEFAULT-VALUE})")
    ReadPath path;

    @Option(names = "--batch-size", defaultValue = "445", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Override
    public java.util.List<Checks.Range> ranges() {
        return java.util.List.of(WORLD);
    }

    @Override
    public Integer call() throws Exception {
        Checks.BATCH_SIZE.check(batchSize);
        if (path == ReadPath.HOST) { // ranks exist to place rank r on GPU r; HOST would run them all on no GPU
            throw new IllegalArgumentException("--path HOST: ranks places rank r on GPU r; use GDS, BOUNCE or AUTO "
                    + "(for host-memory loading without a GPU use bench --paths HOST)");
        }
        if (world != null) {
            WORLD.check(world);
        }
        int w = world != null ? world : Math.max(2, CudaDevice.count());
        return RanksBench.run(data, w, path, batchSize, System.out) ? 0 : 1;
    }
}
