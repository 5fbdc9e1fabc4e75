package dev.gdsloader.cli;

import dev.gdsloader.bench.LatencyBench;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader latency}: time to first batch and heap allocation per batch.
 */
@Command(name = "latency", mixinStandardHelpOptions = true,
        description = "With the data in page cache: time to build a loader, time to its first batch, and heap bytes "
                + "allocated per batch in steady state.")
final class LatencyCommand implements Callable<Integer>, RangedOptions {
    @Parameters(arity = "1", description = "dataset directory")
    Path data;

    @Option(names = "--path", defaultValue = "AUTO", description = "read path (default: ${DEFAULT-VALUE})")
    ReadPath path;

    @Option(names = "--batch-size", defaultValue = "445", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--epochs", defaultValue = "3", description = "epochs measured for allocation, 1..1000 (default: ${DEFAULT-VALUE})")
    int epochs;

    private static final Checks.Range EPOCHS = new Checks.Range("--epochs", 1, 1000);

    @Option(names = "--no-direct", description = "buffered reads, served from the page cache, instead of O_DIRECT")
    boolean noDirect;

    @Override
    public java.util.List<Checks.Range> ranges() {
        return java.util.List.of(EPOCHS);
    }

    @Override
    public Integer call() throws Exception {
        Checks.BATCH_SIZE.check(batchSize);
        EPOCHS.check(epochs);
        LoaderOptions options = LoaderOptions.defaults().withBatchSize(batchSize).withPath(path).withDirectIo(!noDirect);
        LatencyBench.run(data, options, epochs, System.out);
        return 0;
    }
}
