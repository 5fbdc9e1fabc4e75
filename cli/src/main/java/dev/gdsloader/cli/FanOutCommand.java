package dev.gdsloader.cli;

import dev.gdsloader.bench.FanOutBench;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader fanout}: a device group (read once, fan out) against one GPU loading alone ({@link FanOutBench}).
 */
@Command(name = "fanout", mixinStandardHelpOptions = true,
        description = "Compare a device group (each batch read once into the first GPU, copied to the others) with the first "
                + "GPU loading alone on the same data: batches/s per member, storage bytes (the group's should be 1x) and "
                + "epoch time; hot (an untimed epoch first, checking every member's batches byte-exact against the GPU alone) "
                + "or --cold (page cache dropped before each timed epoch; needs root). Exit 1 if a batch was not byte-exact.")
final class FanOutCommand implements Callable<Integer> {
    @Parameters(arity = "1", description = "dataset directory")
    Path data;

    @Option(names = "--devices", split = ",", defaultValue = "0,1", description = "the group's GPUs, read into the first "
            + "(default: ${DEFAULT-VALUE}; one GPU: the group of one against the plain loader)")
    List<Integer> devices;

    @Option(names = "--path", defaultValue = "AUTO", description = "read path (default: ${DEFAULT-VALUE})")
    ReadPath path;

    @Option(names = "--batch-size", defaultValue = "445", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--depth", defaultValue = "4", description = "prefetch depth, slots 1..64 (default: ${DEFAULT-VALUE})")
    int depth;

    @Option(names = "--threads", defaultValue = "8", description = "I/O threads (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--no-direct", description = "buffered reads (page cache) instead of O_DIRECT on the staged paths")
    boolean noDirect;

    @Option(names = "--epochs", defaultValue = "2", description = "timed epochs; the best is reported (default: ${DEFAULT-VALUE})")
    int epochs;

    @Option(names = "--cold", description = "drop the page cache before each timed epoch (needs root); no warm-up, no check")
    boolean cold;

    @Option(names = "--out", description = "also write fanout-hot.json or fanout-cold.json here")
    Path out;

    @Override
    public Integer call() throws Exception {
        Checks.BATCH_SIZE.check(batchSize);
        LoaderOptions options = Checks.loaderOption("--depth", depth, LoaderOptions.defaults().withBatchSize(batchSize)
                .withPath(path)::withPrefetchDepth);
        options = Checks.loaderOption("--threads", threads, options::withIoThreads);
        if (noDirect) {
            options = options.withDirectIo(false);
        }
        if (epochs < 1) {
            throw new IllegalArgumentException("--epochs must be >= 1, got " + epochs);
        }
        if (devices.isEmpty() || devices.stream().distinct().count() != devices.size() || devices.stream().anyMatch(d -> d < 0)) {
            throw new IllegalArgumentException("--devices must name distinct GPUs >= 0, got " + devices);
        }
        if (path != ReadPath.HOST) {
            int n = Cuda.availability().available() ? Cuda.availability().deviceCount() : 0;
            int need = devices.stream().mapToInt(Integer::intValue).max().orElse(0) + 1;
            if (n < need) {
                throw new IllegalArgumentException("--devices " + devices + " needs " + need + " GPU(s), found " + n
                        + (n == 0 ? " (" + Cuda.availability().reason() + "); --path HOST runs without a GPU"
                        : "; --devices 0 compares the group of one"));
            }
        }
        if (out != null) {
            Checks.usableOutputDir("--out", out);
        }
        FanOutBench.Result r = FanOutBench.run(data, options, devices, epochs, cold, true, System.out);
        FanOutBench.print(r, System.out);
        if (out != null) {
            System.out.println("wrote " + FanOutBench.write(r, "gdsloader fanout --devices " + devices.stream().map(String::valueOf)
                    .reduce((a, b) -> a + "," + b).orElse("") + " --path " + path + (cold ? " --cold" : "") + " " + data, out));
        }
        return Boolean.FALSE.equals(r.exact()) ? 1 : 0;
    }
}
