package dev.gdsloader.cli;

import dev.gdsloader.bench.service.ServeBench;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader serve-bench}: the prefetch service's throughput (issue 12) against a raw loopback TCP copy, in one
 * run. A thin shell: it checks the options, then runs the benchmarks module's {@link ServeBench} harness (see it for
 * what each row measures) and prints its table, acceptance line and JSON.
 */
@Command(name = "serve-bench", mixinStandardHelpOptions = true,
        description = "Throughput of the prefetch service (Arrow Flight) in one run on this machine, with a server over "
                + "DATA_DIR's parent in this process on a free loopback port: (loopback) a raw loopback TCP copy of the "
                + "same bytes; (host-1) one Java client, HOST delivery, every batch touched; (host-N) N clients at once, "
                + "rank r of N each; (ipc) CUDA IPC delivery to a child JVM against the same loader in this process "
                + "(skipped without a GPU, saying why); (python) the Python client with --python. GB/s = 1e9 B/s of "
                + "dataset columns; each row after one warm-up epoch. The output ends with one line counting the rows "
                + "below their acceptance and naming them (before the --json line); a completed run exits 0 either way.")
final class ServeBenchCommand implements Callable<Integer>, RangedOptions {
    @Parameters(index = "0", paramLabel = "DATA_DIR", description = "dataset directory (e.g. from gdsloader generate); "
            + "served under its parent by its directory name")
    Path data;

    @Option(names = "--clients", defaultValue = "1,32", split = ",",
            description = "client counts: 1 is the single-client row (always run), each other count N a row of N clients "
                    + "at once (default: ${DEFAULT-VALUE})")
    List<Integer> clients;

    private static final Checks.Range CLIENTS = new Checks.Range("--clients", 1, 1024);

    @Option(names = "--epochs", defaultValue = "2", description = "measured epochs per row, after one warm-up epoch, 1..1000 (default: ${DEFAULT-VALUE})")
    int epochs;

    @Option(names = "--ipc-epochs", description = "measured epochs of the two CUDA IPC rows (the same loader in-process "
            + "and the child JVM), after one warm-up epoch, 1..1000 (default: --epochs)")
    Integer ipcEpochs;

    private static final Checks.Range EPOCHS = new Checks.Range("--epochs", 1, 1000);
    private static final Checks.Range IPC_EPOCHS = new Checks.Range("--ipc-epochs", 1, 1000);
    private static final Checks.Range DEPTH = new Checks.Range("--prefetch-depth", 1, LoaderOptions.MAX_PREFETCH_DEPTH);

    @Option(names = "--memory-budget", paramLabel = "SIZE", converter = ByteSize.class,
            description = "the server's native memory budget (serve --memory-budget, refused the same way above the "
                    + "machine's physical memory; default here: 16GiB, or the physical memory if less; serve's own default "
                    + "is 4GiB): N clients opening at once each hold a GetFlightInfo loader and a stream loader for a "
                    + "moment, 2 rings per client")
    Long memoryBudget;

    /** serve-bench's own default {@code --memory-budget}, bytes, on a machine with at least this much physical memory. */
    static final long DEFAULT_MEMORY_BUDGET = 16L << 30;

    /**
     * @param physical this machine's physical memory, bytes
     * @return the {@code --memory-budget} serve-bench uses when none is given: {@link #DEFAULT_MEMORY_BUDGET}, or
     *     {@code physical} if less (which serve's check would refuse)
     */
    static long defaultMemoryBudget(long physical) {
        return Math.min(DEFAULT_MEMORY_BUDGET, physical);
    }

    @Option(names = "--prefetch-depth", defaultValue = "4", description = "slots of every loader of the run (the server's "
            + "sessions and the in-process loader alike); a CUDA IPC client holds at most this many batches (default: "
            + "${DEFAULT-VALUE})")
    int prefetchDepth;

    @Option(names = "--batch-size", defaultValue = "128", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--no-direct", description = "buffered reads (page cache) instead of the loader's choice (buffered when the "
            + "dataset fits in half of the host's memory, else O_DIRECT); the Python client's script leaves the choice to "
            + "the loader, so leave this and --direct off when comparing with it")
    boolean noDirect;

    @Option(names = "--direct", description = "O_DIRECT reads instead of the loader's choice")
    boolean direct;

    @Option(names = "--ipc-path", defaultValue = "AUTO", description = "read path of the CUDA IPC rows (server and in-process loader) (default: ${DEFAULT-VALUE})")
    ReadPath ipcPath;

    @Option(names = "--device", defaultValue = "0", description = "GPU of the CUDA IPC rows (default: ${DEFAULT-VALUE})")
    int device;

    @Option(names = "--python", paramLabel = "CMD", description = "run the Python client's throughput script against the "
            + "same server, e.g. 'python3 " + ServeBench.PYTHON_SCRIPT + "' (split at spaces; serve-bench adds --data, "
            + "--location, --batch-size, --epochs, --no-raw)")
    String python;

    @Option(names = "--timeout", defaultValue = "120", description = "longest wait for a batch, in seconds, 1..3600 (default: ${DEFAULT-VALUE})")
    int timeoutSeconds;

    /** A CUDA ordinal: from 0 (how many GPUs there are is the IPC rows' own check). */
    private static final Checks.Range DEVICE = new Checks.Range("--device", 0, Integer.MAX_VALUE);
    private static final Checks.Range TIMEOUT = new Checks.Range("--timeout", 1, 3600);

    @Option(names = "--json", description = "also print the report as one JSON line at the end")
    boolean json;

    @Option(names = "--out", paramLabel = "DIR", description = "also write serve-bench.json here")
    Path out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public java.util.List<Checks.Range> ranges() {
        return java.util.List.of(CLIENTS, EPOCHS, IPC_EPOCHS, DEPTH, DEVICE, TIMEOUT);
    }

    @Override
    public Integer call() throws Exception {
        Checks.BATCH_SIZE.check(batchSize);
        EPOCHS.check(epochs);
        if (ipcEpochs != null) {
            IPC_EPOCHS.check(ipcEpochs);
        }
        TIMEOUT.check(timeoutSeconds);
        long budget = memoryBudget != null ? ServeCommand.checkMemoryBudget(memoryBudget)
                : defaultMemoryBudget(dev.gdsloader.memory.NativeAllocator.hostMemoryBytes());
        List<Integer> many = new ArrayList<>();
        java.util.Set<Integer> given = new java.util.HashSet<>();
        for (int n : clients) {
            CLIENTS.check(n);
            if (!given.add(n)) { // a row twice is a typo, not a request: say so rather than run it once
                throw new IllegalArgumentException("--clients: " + n + " is given twice (" + clients.stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.joining(",")) + "); each count is one row");
            }
            if (n > 1) {
                many.add(n);
            }
        }
        if (!Files.isDirectory(data)) {
            throw new IllegalArgumentException(data + ": not a directory (a dataset directory, e.g. from gdsloader generate)");
        }
        if (out != null) {
            Checks.usableOutputDir("--out", out);
        }
        DEVICE.check(device);
        if (direct && noDirect) {
            throw new IllegalArgumentException("--direct and --no-direct: give one of them, or neither for the loader's choice");
        }
        LoaderOptions options = LoaderOptions.defaults();
        try {
            options = options.withBatchSize(batchSize);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--batch-size " + batchSize + ": " + e.getMessage(), e);
        }
        DEPTH.check(prefetchDepth);
        try {
            options = options.withPrefetchDepth(prefetchDepth);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--prefetch-depth " + prefetchDepth + ": " + e.getMessage(), e);
        }
        options = options.withDirectIo(direct ? Boolean.TRUE : noDirect ? Boolean.FALSE : null);
        List<String> py = python == null || python.isBlank() ? List.of() : Arrays.asList(python.strip().split("\\s+"));
        if (!py.isEmpty() && !Checks.runnable(py.get(0))) { // before the server and the other rows, not after them
            throw new IllegalArgumentException("--python: '" + py.get(0) + "' is not an executable file nor a program on PATH");
        }
        ServeBench.Config config = new ServeBench.Config(data, options, many, epochs, ipcPath, device, py,
                Duration.ofSeconds(timeoutSeconds), budget, ipcEpochs != null ? ipcEpochs : epochs);
        List<ServeBench.Row> rows = ServeBench.run(config, System.out);
        ServeBench.print(rows, System.out);
        String command = "gdsloader " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
        String report = ServeBench.json(rows, config, command).toString();
        if (out != null) {
            Path f = out.resolve("serve-bench.json");
            Files.writeString(f, report + "\n");
            System.out.println("wrote " + f);
        }
        System.out.println(ServeBench.acceptanceLine(rows)); // a benchmark that completed exits 0 either way
        if (json) {
            System.out.println(report);
        }
        return 0;
    }
}
