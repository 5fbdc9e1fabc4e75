package dev.gdsloader.bench.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaAvailability;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.client.RemoteColumn;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.server.PrefetchServer;
import dev.gdsloader.service.server.ServerLimits;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The measurements of {@code gdsloader serve-bench} (issue 12's throughput acceptance), in one run on one machine,
 * against one {@link PrefetchServer} started in this process on an ephemeral loopback port whose root is the
 * dataset directory's parent (the dataset is named by its directory name, as {@code gdsloader serve PARENT} would
 * serve it):
 * <ol>
 *   <li>{@code loopback}: {@link LoopbackCeiling} with as many bytes as row 2 received;</li>
 *   <li>{@code host-1}: one {@link PrefetchClient}, HOST delivery, path HOST, one warm-up epoch then {@code epochs}
 *       measured epochs; every column of every batch touched (one long read per 4 KiB and its last byte);</li>
 *   <li>{@code host-N}: N clients at once, each its own {@link PrefetchClient} on its own thread, client r reading rank
 *       r of N ({@link Partition#EXACT_ONCE}, same loader options otherwise), so together they read the dataset once
 *       per epoch; each runs its warm-up epoch, then all start their measured epochs together; total bytes over the
 *       time from that start to the last client's end;</li>
 *   <li>{@code ipc-in-process} and {@code ipc}: the same loader options (path {@code ipcPath}) in this process, a
 *       {@link GdsLoader} whose batches a consumer stream waits for ({@code awaitOn}) and releases
 *       ({@code release(stream)}), the stream drained at the end; then a child JVM ({@link ServeBenchIpcChild})
 *       reading the same epochs over CUDA IPC ({@code DoExchange}) from the server; skipped with the reason when
 *       CUDA is not available;</li>
 *   <li>{@code python}: the command given (e.g. {@code python3 clients/python/tests/bench_host.py}) run with
 *       {@code --data DATA --location grpc://127.0.0.1:PORT --batch-size B --epochs E --no-raw} against the same
 *       server; its {@code BENCH_JSON} line's {@code GBps} and {@code records_per_s}; skipped when not given.</li>
 * </ol>
 * GB/s is 1e9 bytes of dataset columns delivered per second (the {@code _record}/{@code _padding} columns are not
 * counted); records/s counts records without padding. Not thread-safe (one run at a time); owns the server, clients,
 * loader and child processes it starts and closes/ends them before returning.
 */
public final class ServeBench {
    /** Where the Python client's throughput script lives in the repository (branch pyclient). */
    public static final String PYTHON_SCRIPT = "clients/python/tests/bench_host.py";
    /** Prefix of the IPC child's result line. */
    static final String IPC_RESULT = "SERVE_BENCH_IPC ";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LOOPBACK_BUFFER = 4 << 20;

    /**
     * What to run.
     *
     * @param data the dataset directory
     * @param options loader options of every stream and of the in-process loader (batch size set; path and device
     *     are set per row)
     * @param clients client counts of the {@code host-N} rows (each &gt; 1)
     * @param epochs measured epochs per row, after one warm-up epoch, &ge; 1
     * @param ipcPath the read path of the CUDA IPC rows (the server's loader and the in-process loader)
     * @param device the GPU of the CUDA IPC rows
     * @param python the Python client command (program and its first arguments), or empty to skip that row
     * @param timeout the longest wait for any batch, child process line or result
     * @param memoryBudget the server's native memory budget in bytes ({@link ServerLimits#withMemoryBudget})
     * @param ipcEpochs measured epochs of the two CUDA IPC rows ({@code ipc-in-process}, {@code ipc}), each after one
     *     warm-up epoch ({@code --ipc-epochs}, default {@code epochs}): an epoch of CUDA IPC lasts a fraction of a second,
     *     mostly the JIT's warm-up of the exchange's per-batch code unless more epochs are measured
     */
    public record Config(Path data, LoaderOptions options, List<Integer> clients, int epochs, ReadPath ipcPath, int device,
                  List<String> python, Duration timeout, long memoryBudget, int ipcEpochs) {
    }

    /**
     * The bench server's limits: every client of the bench comes from 127.0.0.1, and each holds two sessions for a moment
     * when it opens (its GetFlightInfo's, built and closed at once, and its stream's), so the per-client and server-wide
     * session limits admit twice the most clients of a row (32 clients opening at once were refused at 32 on the H200).
     *
     * @param clients the most clients of one row
     * @param memoryBudget the server's native memory budget in bytes
     * @return the limits
     */
    static ServerLimits limitsFor(int clients, long memoryBudget) {
        ServerLimits limits = ServerLimits.defaults();
        return limits.withSessionsPerClient(Math.max(limits.sessionsPerClient(), 2 * clients))
                .withSessions(Math.max(limits.sessions(), 2 * clients))
                .withConnections(Math.max(limits.connections(), 2 * clients + 8))
                .withConnectionsPerAddress(Math.max(limits.connectionsPerAddress(), 2 * clients + 8))
                .withMemoryBudget(memoryBudget);
    }

    /**
     * One row of the report.
     *
     * @param id {@code loopback}, {@code host-1}, {@code host-N}, {@code ipc-in-process}, {@code ipc}, {@code python}
     * @param what what was measured, in words
     * @param bytes bytes moved (dataset columns), 0 when skipped
     * @param records records delivered (no padding), 0 for the loopback row or when skipped
     * @param seconds measured seconds, NaN when skipped
     * @param gbps GB/s (1e9 B/s), NaN when skipped
     * @param recordsPerSecond records/s, NaN when not applicable
     * @param ratio gbps over the {@code ratioTo} row's gbps, NaN if either is missing
     * @param ratioTo the row this one is compared with, or null
     * @param acceptance issue 12's bound for the ratio, e.g. {@code >= 0.5}, or null
     * @param skipped why the row was not measured, or null
     */
    public record Row(String id, String what, long bytes, long records, double seconds, double gbps, double recordsPerSecond,
               double ratio, String ratioTo, String acceptance, String skipped) {

        static Row skipped(String id, String what, String ratioTo, String acceptance, String reason) {
            return new Row(id, what, 0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, ratioTo, acceptance, reason);
        }

        /**
         * @return the least ratio {@link #acceptance} asks for (the number after {@code >= }), NaN without one
         * @throws IllegalStateException if the acceptance is not {@code >= NUMBER}
         */
        double bound() {
            if (acceptance == null) {
                return Double.NaN;
            }
            if (!acceptance.startsWith(">= ")) {
                throw new IllegalStateException("row " + id + ": acceptance '" + acceptance + "' is not '>= NUMBER'");
            }
            return Double.parseDouble(acceptance.substring(3));
        }

        /** @return whether the row was measured, has an acceptance and a ratio, and the ratio is below it */
        boolean belowAcceptance() {
            return skipped == null && Double.isFinite(ratio) && ratio < bound();
        }

        /** @return whether the row has an acceptance and a measured ratio to judge by it */
        boolean judged() {
            return skipped == null && Double.isFinite(ratio) && acceptance != null;
        }

        Row against(Row base) {
            double r = base == null ? Double.NaN : gbps / base.gbps;
            return new Row(id, what, bytes, records, seconds, gbps, recordsPerSecond, r, ratioTo, acceptance, skipped);
        }
    }

    /**
     * What a set of clients moved: bytes, records, seconds and a sum of the touched bytes (kept so reads stay).
     */
    private record Moved(long bytes, long records, double seconds, long touched, String pathTaken) {
    }

    private ServeBench() {
    }

    /**
     * Runs every row.
     *
     * @param c what to run
     * @param log progress lines and the Python child's output go here
     * @return the rows in order: loopback, host-1, host-N..., ipc-in-process, ipc, python
     * @throws IOException if the dataset cannot be opened, the server cannot start, a socket or a child fails
     * @throws InterruptedException if interrupted
     * @throws dev.gdsloader.service.client.PrefetchServiceException if the server refuses a stream or a wait times out
     */
    public static List<Row> run(Config c, PrintStream log) throws IOException, InterruptedException {
        Path data = c.data().toAbsolutePath().normalize();
        if (!Files.isDirectory(data) || data.getParent() == null) {
            throw new IllegalArgumentException(c.data() + ": not a dataset directory (serve-bench serves its parent and "
                    + "names the dataset by the directory's name)");
        }
        try { // the server's own refusal would point at serve's --allow-system-root, which serve-bench does not take
            dev.gdsloader.service.server.DatasetRoot.of(data.getParent(), false);
        } catch (IOException e) {
            // the parent is a directory (data is one): the refusal is a system directory, as given or where it leads
            throw new IllegalArgumentException(c.data() + ": serve-bench serves the dataset's parent directory, "
                    + data.getParent() + ", and names the dataset by its directory's name; that parent is a system directory "
                    + "(or leads to one), which a server refuses to serve (every client could read it): move the dataset into a "
                    + "directory of datasets (e.g. " + data.getParent().resolve("datasets").resolve(data.getFileName()) + ")", e);
        }
        long records = dev.gdsloader.bench.BenchRunner.requireRecords(c.data(), dev.gdsloader.loader.dataset.Dataset.open(data)); // before the server
        for (int n : c.clients()) { // every row's ranks checked before any row runs, as each client's loader checks its own
            try {
                new dev.gdsloader.loader.sampler.Sampler(c.options().sampler().withRanks(0, n, Partition.EXACT_ONCE),
                        new long[] {records}, c.options().batchSize());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--clients " + n + ": " + e.getMessage(), e); // names the records
            }
        }
        String name = data.getFileName().toString();
        LoaderOptions host = c.options().withPath(ReadPath.HOST);
        List<Row> rows = new ArrayList<>();
        int most = c.clients().stream().mapToInt(Integer::intValue).max().orElse(1);
        ServerLimits limits = limitsFor(most, c.memoryBudget());
        try (PrefetchServer server = PrefetchServer.builder(data.getParent()).port(0).limits(limits).start()) {
            int port = server.port();
            log.println("serve-bench: serving " + name + " under " + data.getParent() + " on 127.0.0.1:" + port);
            log.println("serve-bench: 1 client, HOST delivery, 1 warm-up + " + c.epochs() + " epoch(s) ...");
            Moved one = clients(port, name, host, 1, c.epochs(), c.timeout());
            awaitIdle(server, log);
            Row host1 = row("host-1", "1 Java client, loopback, HOST delivery (DoGet), path " + one.pathTaken(), one,
                    "loopback", ">= 0.5");
            log.println("serve-bench: loopback TCP copy of " + one.bytes() + " bytes ...");
            LoopbackCeiling.Result ceiling = LoopbackCeiling.measure(one.bytes(), LOOPBACK_BUFFER);
            Row loop = new Row("loopback", "raw loopback TCP copy, 1 connection, NIO SocketChannel, 4 MiB direct buffers",
                    ceiling.bytes(), 0, ceiling.seconds(), ceiling.gbps(), Double.NaN, Double.NaN, null, null, null);
            rows.add(loop);
            rows.add(host1.against(loop));
            for (int n : c.clients()) {
                log.println("serve-bench: " + n + " clients, rank r of " + n + " each ...");
                Moved m = clients(port, name, host, n, c.epochs(), c.timeout());
                awaitIdle(server, log);
                rows.add(row("host-" + n, n + " Java clients at once, rank r of " + n + " each (the dataset once per epoch "
                        + "in all), HOST delivery", m, "host-1", ">= 2").against(host1));
            }
            ipcRows(c, server, data, name, rows, log);
            rows.add(python(c, port, data, host1, log));
        }
        return rows;
    }

    /**
     * Waits until the server has freed every session of the row before, parked ones too (each row starts on an idle
     * server: no parked loader reads its next epoch ahead during the next row).
     *
     * @throws IllegalStateException naming the sessions' memory if some are still held 30 s after their clients closed
     */
    private static void awaitIdle(PrefetchServer server, PrintStream log) throws InterruptedException {
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.SECONDS.toNanos(30);
        int parked = server.freeParkedSessions();
        while (server.sessions() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        if (server.sessions() > 0) {
            throw new IllegalStateException("serve-bench: " + server.sessions() + " sessions still held 30 s after their "
                    + "clients closed: " + server.allocator().describeOutstanding());
        }
        log.printf(java.util.Locale.ROOT, "serve-bench: every session freed %.3f s after the row (%d of them parked for a next "
                + "epoch)%n", (System.nanoTime() - t0) / 1e9, parked);
    }

    private static Row row(String id, String what, Moved m, String ratioTo, String acceptance) {
        return new Row(id, what, m.bytes(), m.records(), m.seconds(), m.bytes() / m.seconds() / 1e9,
                m.records() / m.seconds(), Double.NaN, ratioTo, acceptance, null);
    }

    /**
     * {@code n} clients on their own threads, each with its own {@link PrefetchClient}; client r reads rank r of n
     * (when n &gt; 1). Each reads a warm-up epoch; then all start together and read {@code epochs} epochs.
     */
    private static Moved clients(int port, String name, LoaderOptions options, int n, int epochs, Duration timeout)
            throws InterruptedException {
        AtomicLong start = new AtomicLong();
        AtomicLong end = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicLong records = new AtomicLong();
        AtomicLong touched = new AtomicLong();
        AtomicReference<String> path = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        CyclicBarrier go = new CyclicBarrier(n, () -> start.set(System.nanoTime()));
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            threads.add(Thread.ofPlatform().name("gdsloader-serve-bench-client-" + r).start(() -> {
                PrefetchClient.Builder b = PrefetchClient.builder("127.0.0.1", port).dataset(name).options(options)
                        .delivery(Delivery.HOST).timeout(timeout);
                if (n > 1) {
                    b.ranks(rank, n, Partition.EXACT_ONCE);
                }
                try (PrefetchClient client = b.open()) {
                    path.compareAndSet(null, client.pathTaken());
                    readEpoch(client, new long[3]); // warm-up
                    if (failed.get() != null) {
                        return;
                    }
                    go.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
                    long[] sums = new long[3];
                    for (int e = 0; e < epochs; e++) {
                        readEpoch(client, sums);
                    }
                    end.accumulateAndGet(System.nanoTime(), Math::max);
                    bytes.addAndGet(sums[0]);
                    records.addAndGet(sums[1]);
                    touched.addAndGet(sums[2]);
                } catch (InterruptedException | BrokenBarrierException | TimeoutException | RuntimeException | Error e) {
                    if (failed.compareAndSet(null, e)) {
                        go.reset(); // the others waiting at the start see a broken barrier and end
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        Throwable f = failed.get();
        if (f instanceof RuntimeException re) {
            throw re;
        } else if (f instanceof Error err) {
            throw err;
        } else if (f != null) {
            throw new IllegalStateException("serve-bench: a client failed: " + f, f);
        }
        return new Moved(bytes.get(), records.get(), (end.get() - start.get()) / 1e9, touched.get(), path.get());
    }

    /** Reads one epoch, adding bytes, records and the touched sum to {@code sums[0..2]}. */
    private static void readEpoch(PrefetchClient client, long[] sums) {
        for (RemoteBatch b : client) {
            try (b) {
                for (RemoteColumn col : b.columns()) {
                    sums[0] += col.bytes();
                    sums[2] += touch(col.hostBuffer());
                }
                sums[1] += b.records() - b.paddingCount();
            }
        }
    }

    /**
     * Reads one long per 4 KiB page of {@code b} (from its position) and its last byte, so every page the client
     * received is touched.
     *
     * @param b a buffer
     * @return the sum of what was read
     */
    static long touch(ByteBuffer b) {
        long s = 0;
        int limit = b.limit();
        for (int i = b.position(); i + Long.BYTES <= limit; i += 4096) {
            s += b.getLong(i);
        }
        return limit > b.position() ? s + b.get(limit - 1) : s;
    }

    private static void ipcRows(Config c, PrefetchServer server, Path data, String name, List<Row> rows, PrintStream log)
            throws IOException, InterruptedException {
        String inWhat = "the same loader in this process, path " + c.ipcPath() + ", GPU " + c.device()
                + ": awaitOn + release(stream), stream drained at the end";
        String ipcWhat = "CUDA IPC delivery (DoExchange) to a child JVM, path " + c.ipcPath() + ", GPU " + c.device();
        CudaAvailability cuda = Cuda.availability();
        if (!cuda.available()) {
            String reason = "no GPU: " + cuda.reason();
            rows.add(Row.skipped("ipc-in-process", inWhat, null, null, reason));
            rows.add(Row.skipped("ipc", ipcWhat, "ipc-in-process", ">= 0.9", reason));
            return;
        }
        LoaderOptions options = c.options().withPath(c.ipcPath()).withDevice(c.device());
        log.println("serve-bench: the loader in this process, path " + c.ipcPath() + " ...");
        Moved in = inProcess(data, options, c.ipcEpochs());
        Row inRow = row("ipc-in-process", inWhat + " (path taken " + in.pathTaken() + ")", in, null, null);
        rows.add(inRow);
        log.println("serve-bench: CUDA IPC to a child JVM ...");
        Moved child = ipcChild(server.port(), name, options, c.ipcEpochs(), c.timeout());
        rows.add(row("ipc", ipcWhat + " (path taken " + child.pathTaken() + ")", child, "ipc-in-process", ">= 0.9")
                .against(inRow));
    }

    private static Moved inProcess(Path data, LoaderOptions options, int epochs) throws IOException {
        CudaDevice.makeCurrent(options.device());
        try (GdsLoader loader = GdsLoader.builder(data).options(options).build(); CudaStream stream = CudaStream.create()) {
            long[] warm = new long[2];
            consume(loader, stream, warm);
            stream.synchronize();
            long[] sums = new long[2];
            long t0 = System.nanoTime();
            for (int e = 0; e < epochs; e++) {
                consume(loader, stream, sums);
            }
            stream.synchronize();
            long t1 = System.nanoTime();
            return new Moved(sums[0], sums[1], (t1 - t0) / 1e9, 0, loader.pathTaken().name());
        }
    }

    private static void consume(GdsLoader loader, CudaStream stream, long[] sums) {
        for (Batch b : loader) {
            sums[0] += b.bytes();
            sums[1] += b.records() - b.paddingCount();
            b.awaitOn(stream);
            b.release(stream);
        }
    }

    private static Moved ipcChild(int port, String name, LoaderOptions options, int epochs, Duration timeout)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments()); // the JVM flags this JVM runs with
        cmd.addAll(List.of("-cp", childClassPath(), ServeBenchIpcChild.class.getName(),
                "127.0.0.1", Integer.toString(port), name, options.toJson(), Integer.toString(epochs),
                Long.toString(timeout.toSeconds())));
        JsonNode r = resultLine(new ProcessBuilder(cmd), IPC_RESULT, "the CUDA IPC child JVM", timeout, System.err);
        return new Moved(r.path("bytes").asLong(), r.path("records").asLong(), r.path("seconds").asDouble(), 0,
                r.path("pathTaken").asText());
    }

    /**
     * The class path of the IPC child: what URL class loaders above this class add (the JUnit console launcher's
     * {@code --class-path}, as benchmarks/device/gpu-tests.sh runs the GPU tests) and this JVM's class path.
     */
    private static String childClassPath() {
        java.util.LinkedHashSet<String> entries = new java.util.LinkedHashSet<>();
        for (ClassLoader l = ServeBench.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof java.net.URLClassLoader u) {
                for (java.net.URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (java.net.URISyntaxException | IllegalArgumentException e) {
                        // not a file: the child cannot use it either
                    }
                }
            }
        }
        entries.addAll(List.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator)));
        return String.join(java.io.File.pathSeparator, entries);
    }

    private static Row python(Config c, int port, Path data, Row host1, PrintStream log) throws IOException, InterruptedException {
        String what = "Python client (pyarrow.flight, FlightLoader, numpy), loopback, HOST delivery";
        if (c.python().isEmpty()) {
            return Row.skipped("python", what, "host-1", ">= 0.8", "not asked: add --python 'python3 " + PYTHON_SCRIPT
                    + "' (needs pyarrow; run from the repository root)");
        }
        List<String> cmd = new ArrayList<>(c.python());
        cmd.addAll(List.of("--data", data.toString(), "--location", "grpc://127.0.0.1:" + port,
                "--batch-size", Integer.toString(c.options().batchSize()), "--epochs", Integer.toString(c.epochs()), "--no-raw"));
        log.println("serve-bench: " + String.join(" ", cmd));
        JsonNode r = resultLine(new ProcessBuilder(cmd), "BENCH_JSON ", "the Python client", c.timeout(), log);
        double gbps = r.path("GBps").asDouble(Double.NaN);
        double rps = r.path("records_per_s").asDouble(Double.NaN);
        // the script reports medians of its epochs, not totals: bytes and records are per second here
        return new Row("python", what + ", median of " + c.epochs() + " epoch(s)", 0, 0, Double.NaN, gbps, rps,
                gbps / host1.gbps(), "host-1", ">= 0.8", null);
    }

    /**
     * Runs a child process and returns the JSON after {@code prefix} on its last such line; its other output goes to
     * {@code echo}, prefixed.
     */
    private static JsonNode resultLine(ProcessBuilder pb, String prefix, String who, Duration timeout, PrintStream echo)
            throws IOException, InterruptedException {
        Process p = pb.redirectErrorStream(true).start();
        // a serve-bench stopped by a signal (SIGTERM, Ctrl-C) takes its child with it instead of leaving it running
        Thread stopChild = new Thread(() -> {
            p.descendants().forEach(ProcessHandle::destroy); // its own children first, while they are still its
            p.destroy();
        }, "gdsloader-serve-bench-stop-child");
        Runtime.getRuntime().addShutdownHook(stopChild);
        try {
            return awaitResult(p, pb, prefix, who, timeout, echo);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stopChild);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs now
            }
        }
    }

    private static JsonNode awaitResult(Process p, ProcessBuilder pb, String prefix, String who, Duration timeout,
                                        PrintStream echo) throws IOException, InterruptedException {
        AtomicReference<String> result = new AtomicReference<>();
        List<String> tail = new ArrayList<>();
        Thread reader = Thread.ofPlatform().daemon().name("gdsloader-serve-bench-child-output").start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith(prefix)) {
                        result.set(line.substring(prefix.length()));
                    } else {
                        echo.println("  " + line);
                        synchronized (tail) {
                            tail.add(line);
                            if (tail.size() > 5) {
                                tail.removeFirst();
                            }
                        }
                    }
                }
            } catch (IOException e) {
                echo.println("  (reading " + who + "'s output failed: " + e.getMessage() + ")");
            }
        });
        // a child reads a warm-up epoch and the measured ones: give it the batch timeout per epoch, at least 10 min
        long waitSeconds = Math.max(600, timeout.toSeconds() * 4);
        if (!p.waitFor(waitSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IOException(who + " ran over " + waitSeconds + " s and was killed: " + String.join(" ", pb.command()));
        }
        reader.join(10_000);
        String last;
        synchronized (tail) {
            last = String.join(" | ", tail);
        }
        if (p.exitValue() != 0 || result.get() == null) {
            throw new IOException(who + " exited with status " + p.exitValue() + (result.get() == null ? " without a '"
                    + prefix.strip() + "' line" : "") + "; its last lines: " + last);
        }
        return JSON.readTree(result.get());
    }

    /**
     * The report as JSON: {@code {"command", "dataset", "options", "epochs", "belowAcceptance", "belowAcceptanceRows",
     * "rows": [{id, what, bytes, records, seconds, gbps, recordsPerSecond, ratio, ratioTo, acceptance, skipped}]}}; NaN
     * numbers are null; {@code belowAcceptance} counts the measured rows whose ratio is below their acceptance, and
     * {@code belowAcceptanceRows} lists their ids.
     *
     * @param rows the rows
     * @param c the configuration they were measured with
     * @param command the command line, recorded
     * @return the JSON object
     */
    public static ObjectNode json(List<Row> rows, Config c, String command) {
        ObjectNode o = JSON.createObjectNode();
        o.put("command", command);
        o.put("dataset", c.data().toAbsolutePath().normalize().toString());
        o.set("options", JSON.valueToTree(parse(c.options().toJson())));
        o.put("epochs", c.epochs());
        o.put("ipcEpochs", c.ipcEpochs());
        o.put("belowAcceptance", rows.stream().filter(Row::belowAcceptance).count());
        ArrayNode below = o.putArray("belowAcceptanceRows");
        rows.stream().filter(Row::belowAcceptance).forEach(r -> below.add(r.id()));
        ArrayNode a = o.putArray("rows");
        for (Row r : rows) {
            ObjectNode j = a.addObject();
            j.put("id", r.id());
            j.put("what", r.what());
            j.put("bytes", r.bytes());
            j.put("records", r.records());
            num(j, "seconds", r.seconds());
            num(j, "gbps", r.gbps());
            num(j, "recordsPerSecond", r.recordsPerSecond());
            num(j, "ratio", r.ratio());
            j.put("ratioTo", r.ratioTo());
            j.put("acceptance", r.acceptance());
            j.put("skipped", r.skipped());
        }
        return o;
    }

    /**
     * The line that ends a run's output: how many of the rows judged by an acceptance (measured, with a ratio) are below
     * it, and which, e.g. {@code serve-bench: 2 of 4 rows below acceptance: host-1 (0.37 < 0.5), ipc (0.62 < 0.9)};
     * rows with an acceptance that were skipped or have no ratio are named as not judged.
     *
     * @param rows the rows
     * @return the line, without a line break
     */
    public static String acceptanceLine(List<Row> rows) {
        List<Row> judged = rows.stream().filter(Row::judged).toList();
        List<Row> below = judged.stream().filter(Row::belowAcceptance).toList();
        StringBuilder b = new StringBuilder("serve-bench: " + below.size() + " of " + judged.size() + " rows below acceptance");
        for (int i = 0; i < below.size(); i++) {
            Row r = below.get(i);
            b.append(i == 0 ? ": " : ", ").append(r.id()).append(String.format(Locale.ROOT, " (%.2f < %s)", r.ratio(),
                    r.acceptance().substring(3)));
        }
        List<String> notJudged = rows.stream().filter(r -> r.acceptance() != null && !r.judged()).map(Row::id).toList();
        if (!notJudged.isEmpty()) {
            b.append("; not judged (skipped or no ratio): ").append(String.join(", ", notJudged));
        }
        return b.toString();
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("LoaderOptions.toJson() wrote JSON that does not parse: " + json, e);
        }
    }

    private static void num(ObjectNode j, String k, double v) {
        if (Double.isFinite(v)) {
            j.put(k, v);
        } else {
            j.putNull(k);
        }
    }

    /**
     * Prints the rows as a table (skipped rows with their reason).
     *
     * @param rows the rows
     * @param out where
     */
    public static void print(List<Row> rows, PrintStream out) {
        out.printf(Locale.ROOT, "%-15s %9s %12s %8s %-15s %-10s %s%n", "row", "GB/s", "records/s", "ratio", "to", "acceptance", "what");
        for (Row r : rows) {
            if (r.skipped() != null) {
                out.printf(Locale.ROOT, "%-15s %9s %12s %8s %-15s %-10s %s: skipped: %s%n", r.id(), "-", "-", "-",
                        dash(r.ratioTo()), dash(r.acceptance()), r.what(), r.skipped());
            } else {
                out.printf(Locale.ROOT, "%-15s %9.3f %12s %8s %-15s %-10s %s%n", r.id(), r.gbps(),
                        Double.isFinite(r.recordsPerSecond()) ? String.format(Locale.ROOT, "%.0f", r.recordsPerSecond()) : "-",
                        Double.isFinite(r.ratio()) ? String.format(Locale.ROOT, "%.2f", r.ratio()) : "-",
                        dash(r.ratioTo()), dash(r.acceptance()), r.what());
            }
        }
    }

    private static String dash(String s) {
        return s == null ? "-" : s;
    }
}
