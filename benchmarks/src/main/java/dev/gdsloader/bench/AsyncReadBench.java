package dev.gdsloader.bench;

import dev.gdsloader.cuda.Closeables;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.cufile.AsyncRead;
import dev.gdsloader.cufile.CuFileBufferRegistration;
import dev.gdsloader.cufile.CuFileHandle;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.cufile.CuFileStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

/**
 * {@code cuFileReadAsync} on registered streams against threaded synchronous {@code cuFileRead}, in one run:
 * the same file ranges ({@link ReadRanges}) are read into one registered device buffer (a) by N threads each
 * calling {@code cuFileRead} into its own slot and (b) by one host thread enqueuing {@code cuFileReadAsync}
 * round-robin on K registered streams, up to {@code depth} reads in flight per stream, each into its own slot.
 * For each cache mode and request size, every setting runs once per round, rounds interleaved, and the table
 * shows medians in GB/s (1e9 bytes per second) and async/threaded of the best medians. Before timing, each
 * reader's bytes are checked once (largest N, largest K): every request is copied back to the host and its
 * CRC32 compared with the file's, so a fast wrong read cannot win. Not thread-safe.
 */
public final class AsyncReadBench {
    private AsyncReadBench() {
    }

    /** How the files are opened and where their bytes come from. */
    public enum Mode {
        /** Buffered handles over a page cache warmed by a full read first. */
        WARM("buffered handles, page cache warm"),
        /** {@code O_DIRECT} handles: every byte from storage (buffered where the filesystem refuses it). */
        DIRECT("O_DIRECT handles, from storage");

        private final String description;

        Mode(String description) {
            this.description = description;
        }

        /** @return one line for the table heading */
        public String description() {
            return description;
        }
    }

    /**
     * What to measure.
     *
     * @param threads thread counts of the threaded reader, each &ge; 1
     * @param streams stream counts of the async reader, each &ge; 1
     * @param requestBytes request sizes, each a positive multiple of 4 KiB, at most 1 GiB
     * @param modes cache modes
     * @param rounds interleaved rounds per setting, &ge; 1
     * @param depth async reads in flight per stream, &ge; 1
     * @param streamFlags {@code cuFileStreamRegister} flags, 0 to 15 ({@link CuFileStream})
     */
    public record Options(List<Integer> threads, List<Integer> streams, List<Long> requestBytes, List<Mode> modes,
                          int rounds, int depth, int streamFlags) {
        private static final long MAX_REQUEST = 1L << 30;

        /**
         * @throws IllegalArgumentException naming the first bad value
         */
        public Options {
            threads = positive(threads, "--threads");
            streams = positive(streams, "--streams");
            if (requestBytes == null || requestBytes.isEmpty()) {
                throw new IllegalArgumentException("--sizes needs at least one request size");
            }
            for (long b : requestBytes) {
                if (b <= 0 || b % 4096 != 0 || b > MAX_REQUEST) {
                    throw new IllegalArgumentException("--sizes: each request size must be a positive multiple of 4 KiB "
                            + "up to 1 GiB, got " + b + " bytes");
                }
            }
            requestBytes = List.copyOf(requestBytes);
            if (modes == null || modes.isEmpty()) {
                throw new IllegalArgumentException("--modes needs at least one of " + List.of(Mode.values()));
            }
            modes = List.copyOf(modes);
            if (rounds < 1) {
                throw new IllegalArgumentException("--rounds must be >= 1, got " + rounds);
            }
            if (depth < 1) {
                throw new IllegalArgumentException("--depth must be >= 1, got " + depth);
            }
            if (streamFlags < 0 || streamFlags > 15) {
                throw new IllegalArgumentException("--stream-flags must be 0 to 15, got " + streamFlags);
            }
        }

        private static List<Integer> positive(List<Integer> v, String name) {
            if (v == null || v.isEmpty() || v.stream().anyMatch(x -> x == null || x < 1)) {
                throw new IllegalArgumentException(name + " needs one or more counts, each >= 1, got " + v);
            }
            return List.copyOf(v);
        }

        /** @return device slots: one per thread, {@code depth} per stream */
        long slots() {
            return Math.max(Collections.max(threads), (long) Collections.max(streams) * depth);
        }
    }

    /**
     * The outcome of one mode and request size.
     *
     * @param mode cache mode
     * @param requestBytes request size
     * @param threads the thread count with the best median
     * @param threadedGbps its median GB/s
     * @param streams the stream count with the best median
     * @param asyncGbps its median GB/s
     */
    public record Comparison(Mode mode, long requestBytes, int threads, double threadedGbps, int streams, double asyncGbps) {
        /** @return best async median over best threaded median (above 1: async is faster) */
        public double ratio() {
            return threadedGbps == 0 ? 0 : asyncGbps / threadedGbps;
        }

        /** @return which reader to keep for this setting */
        public String keep() {
            return ratio() > 1 ? "cuFileReadAsync on " + streams + " streams" : "threaded cuFileRead (" + threads + " threads)";
        }
    }

    /**
     * Says why the benchmark cannot run here, without running it.
     *
     * @param dataDir the directory the files are in (a probe file is registered there)
     * @return empty when cuFile and its stream API are usable, else one line
     */
    public static Optional<String> unavailableReason(Path dataDir) {
        CuFileStatus st = CuFileProbe.probe(Optional.of(dataDir));
        if (!st.usable()) {
            return Optional.of(st.reason());
        }
        return CuFileStream.unavailableReason();
    }

    /**
     * Runs every mode, size and setting and prints the tables and a summary.
     *
     * @param data a file, or a directory whose files are read
     * @param o what to measure
     * @param out where the tables go
     * @return one comparison per mode and request size
     * @throws IOException if a read fails, returns short, or delivers bytes that differ from the file
     */
    @SuppressWarnings("try") // reg is held, not referenced: cuFile reads into dev while it is registered
    public static List<Comparison> run(Path data, Options o, PrintStream out) throws IOException {
        List<Path> files = ReadRanges.filesOf(data);
        CudaDevice.makeCurrent(0);
        long maxRequest = Collections.max(o.requestBytes());
        int maxThreads = Collections.max(o.threads());
        int maxStreams = Collections.max(o.streams());
        List<Comparison> result = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(maxThreads, Thread.ofPlatform().daemon().name("cufileread-", 0).factory());
        // closed in reverse order: the async reads (waiting for any in flight) and streams before the memory they write
        try (DeviceBuffer dev = DeviceBuffer.allocate(o.slots() * maxRequest);
             CuFileBufferRegistration reg = CuFileBufferRegistration.register(dev);
             PinnedBuffer host = PinnedBuffer.allocate(Math.max(maxThreads, maxStreams) * maxRequest);
             Streams streams = new Streams(maxStreams, o)) {
            Map<Long, long[]> crcs = new HashMap<>();
            for (Mode m : o.modes()) {
                List<CuFileHandle> handles = new ArrayList<>();
                try {
                    for (Path f : files) {
                        handles.add(m == Mode.WARM ? CuFileHandle.registerBuffered(f) : CuFileHandle.register(f));
                    }
                    for (long size : o.requestBytes()) {
                        ReadRanges ranges = ReadRanges.of(files, size);
                        long[] crc = crcs.get(size);
                        if (crc == null || m == Mode.WARM) {
                            crc = ranges.expectedCrc32(); // also warms the page cache
                            crcs.put(size, crc);
                        }
                        Run r = new Run(ranges, handles, dev, host, size, o, pool, streams.cuda, streams.reads);
                        r.verifyThreaded(maxThreads, crc);
                        r.verifyAsync(maxStreams, crc);
                        result.add(r.measure(m, out));
                    }
                } finally {
                    handles.forEach(CuFileHandle::close);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        printSummary(result, out);
        return result;
    }

    /**
     * Prints the summary lines.
     *
     * @param result the comparisons
     * @param out where they go
     */
    static void printSummary(List<Comparison> result, PrintStream out) {
        StringBuilder sb = new StringBuilder("summary, async/threaded (best medians):");
        int asyncWins = 0;
        for (Comparison c : result) {
            sb.append(String.format(Locale.ROOT, " %s %s %.2f;", c.mode().name().toLowerCase(Locale.ROOT),
                    size(c.requestBytes()), c.ratio()));
            asyncWins += c.ratio() > 1 ? 1 : 0;
        }
        out.println(sb.substring(0, sb.length() - 1));
        out.printf(Locale.ROOT, "faster: cuFileReadAsync in %d of %d settings, threaded cuFileRead in %d%n", asyncWins,
                result.size(), result.size() - asyncWins);
    }

    /**
     * @param bytes a multiple of 4 KiB
     * @return e.g. "4 MiB" or "64 KiB"
     */
    static String size(long bytes) {
        return bytes % (1 << 20) == 0 ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }

    /** The CUDA streams, their cuFile registrations and {@code depth} async reads per stream, closed together. */
    private static final class Streams implements AutoCloseable {
        final List<CudaStream> cuda = new ArrayList<>();
        final List<CuFileStream> registered = new ArrayList<>();
        final List<AsyncRead> reads = new ArrayList<>();

        Streams(int count, Options o) throws IOException {
            try {
                for (int s = 0; s < count; s++) {
                    cuda.add(CudaStream.create());
                    registered.add(CuFileStream.register(cuda.get(s), o.streamFlags()));
                    for (int j = 0; j < o.depth(); j++) {
                        reads.add(AsyncRead.on(registered.get(s)));
                    }
                }
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        /**
         * Closes the reads (each waits for its read in flight), then deregisters and destroys the streams; every
         * one is closed even if an earlier close fails.
         *
         * @throws RuntimeException the first failure, later ones suppressed, after everything was closed
         */
        @Override
        public void close() {
            List<AutoCloseable> all = new ArrayList<>(reads);
            all.addAll(registered);
            all.addAll(cuda);
            Exception first = Closeables.closeAll(all.toArray(AutoCloseable[]::new));
            if (first != null) {
                throw first instanceof RuntimeException re ? re : new IllegalStateException(first);
            }
        }
    }

    /** One mode and request size: the ranges, the open handles and the shared buffers, slots and streams. */
    private record Run(ReadRanges ranges, List<CuFileHandle> handles, DeviceBuffer dev, PinnedBuffer host, long slot,
                       Options o, ExecutorService pool, List<CudaStream> streams, List<AsyncRead> reads) {

        private ReadRanges.Range range(int i) {
            return ranges.ranges().get(i);
        }

        private CuFileHandle handle(ReadRanges.Range r) {
            return handles.get(r.file());
        }

        private AsyncRead read(int stream, int depthIndex) {
            return reads.get(stream * o.depth() + depthIndex);
        }

        private void checkCount(String reader, ReadRanges.Range r, long n) throws IOException {
            if (n != r.length()) {
                throw new IOException(reader + ": " + n + " bytes instead of " + r.length() + " from "
                        + ranges.files().get(r.file()) + " at offset " + r.offset());
            }
        }

        private void checkCrc(String reader, int i, long hostOffset, long[] expected) throws IOException {
            ReadRanges.Range r = range(i);
            CRC32 crc = new CRC32();
            crc.update(host.segment().asSlice(hostOffset, r.length()).asByteBuffer());
            if (crc.getValue() != expected[i]) {
                throw new IOException(String.format(Locale.ROOT, "%s: the device bytes of %s at offset %d (%d bytes) "
                        + "differ from the file: CRC32 %08x, file %08x", reader, ranges.files().get(r.file()), r.offset(),
                        r.length(), crc.getValue(), expected[i]));
            }
        }

        /** Threads read each request into their slot, copy it back and compare its CRC32. */
        void verifyThreaded(int threads, long[] expected) throws IOException {
            String reader = "cuFileRead, " + threads + " threads";
            AtomicInteger next = new AtomicInteger();
            onThreads(threads, t -> {
                try (CudaStream s = CudaStream.create()) {
                    for (int i; (i = next.getAndIncrement()) < ranges.ranges().size(); ) {
                        ReadRanges.Range r = range(i);
                        checkCount(reader, r, handle(r).read(dev, t * slot, r.length(), r.offset()));
                        s.copyToHost(host, t * slot, dev, t * slot, r.length());
                        s.synchronize();
                        checkCrc(reader, i, t * slot, expected);
                    }
                }
                return 0L;
            });
        }

        /** Requests go round-robin to the streams, each followed by a copy back on the same stream. */
        void verifyAsync(int k, long[] expected) throws IOException {
            String reader = "cuFileReadAsync, " + k + " streams";
            int n = ranges.ranges().size();
            for (int first = 0; first < n; first += k) {
                for (int s = 0; s < k && first + s < n; s++) {
                    ReadRanges.Range r = range(first + s);
                    read(s, 0).start(handle(r), dev, slotOf(s, 0), r.length(), r.offset());
                    streams.get(s).copyToHost(host, s * slot, dev, slotOf(s, 0), r.length());
                }
                for (int s = 0; s < k && first + s < n; s++) {
                    checkCount(reader, range(first + s), read(s, 0).await());
                    streams.get(s).synchronize();
                    checkCrc(reader, first + s, s * slot, expected);
                }
            }
        }

        private long slotOf(int stream, int depthIndex) {
            return (stream * (long) o.depth() + depthIndex) * slot;
        }

        /** @return GB/s of {@code threads} threads calling {@code cuFileRead} over every range */
        double threaded(int threads) throws IOException {
            AtomicInteger next = new AtomicInteger();
            long t0 = System.nanoTime();
            long bytes = onThreads(threads, t -> {
                long sum = 0;
                for (int i; (i = next.getAndIncrement()) < ranges.ranges().size(); ) {
                    ReadRanges.Range r = range(i);
                    long got = handle(r).read(dev, t * slot, r.length(), r.offset());
                    checkCount("cuFileRead", r, got);
                    sum += got;
                }
                return sum;
            });
            return rate(bytes, System.nanoTime() - t0);
        }

        /** @return GB/s of one thread enqueuing {@code cuFileReadAsync} on {@code k} streams over every range */
        double async(int k) throws IOException {
            int n = ranges.ranges().size();
            ReadRanges.Range[] pending = new ReadRanges.Range[k * o.depth()];
            long bytes = 0;
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                int s = i % k;
                int j = (i / k) % o.depth();
                AsyncRead a = read(s, j);
                ReadRanges.Range before = pending[s * o.depth() + j];
                if (before != null) {
                    long got = a.await();
                    checkCount("cuFileReadAsync", before, got);
                    bytes += got;
                }
                ReadRanges.Range r = range(i);
                a.start(handle(r), dev, slotOf(s, j), r.length(), r.offset());
                pending[s * o.depth() + j] = r;
            }
            for (int p = 0; p < pending.length; p++) {
                if (pending[p] != null) {
                    long got = reads.get(p).await();
                    checkCount("cuFileReadAsync", pending[p], got);
                    bytes += got;
                }
            }
            return rate(bytes, System.nanoTime() - t0);
        }

        private double rate(long bytes, long nanos) throws IOException {
            if (bytes != ranges.totalBytes()) {
                throw new IOException("read " + bytes + " bytes, expected " + ranges.totalBytes());
            }
            return bytes / (double) nanos;
        }

        /** A task of thread number {@code t}. */
        private interface Task {
            long run(int t) throws Exception;
        }

        private long onThreads(int threads, Task task) throws IOException {
            List<Future<Long>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                fs.add(pool.submit(() -> task.run(id)));
            }
            long sum = 0;
            try {
                for (Future<Long> f : fs) {
                    sum += f.get();
                }
            } catch (ExecutionException e) {
                // the other threads may still be in cuFileRead on the device buffer: let them finish first
                for (Future<Long> f : fs) {
                    try {
                        f.get();
                    } catch (ExecutionException | InterruptedException ignored) {
                        // the first failure is the one reported
                    }
                }
                throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            return sum;
        }

        /** Runs every setting once per round, interleaved, and prints the table. */
        Comparison measure(Mode m, PrintStream out) throws IOException {
            int nt = o.threads().size();
            int ns = o.streams().size();
            double[][] gbps = new double[nt + ns][o.rounds()];
            for (int round = 0; round < o.rounds(); round++) {
                for (int t = 0; t < nt; t++) {
                    gbps[t][round] = threaded(o.threads().get(t));
                }
                for (int s = 0; s < ns; s++) {
                    gbps[nt + s][round] = async(o.streams().get(s));
                }
            }
            boolean direct = handles.stream().allMatch(CuFileHandle::isDirect);
            out.printf(Locale.ROOT, "== %s: %s%s; %s requests, %d reads, %.2f GB in %d files; %d rounds; "
                    + "bytes verified (CRC32 per request) for %d threads and %d streams; stream flags %d, depth %d%n",
                    m.name().toLowerCase(Locale.ROOT), m.description(),
                    m == Mode.DIRECT && !direct ? " (O_DIRECT refused by the filesystem: buffered)" : "", size(slot),
                    ranges.ranges().size(), ranges.totalBytes() / 1e9, ranges.files().size(), o.rounds(),
                    Collections.max(o.threads()), Collections.max(o.streams()), o.streamFlags(), o.depth());
            int bestT = 0;
            for (int t = 1; t < nt; t++) {
                bestT = Stats.median(gbps[t]) > Stats.median(gbps[bestT]) ? t : bestT;
            }
            int bestS = nt;
            for (int s = nt + 1; s < nt + ns; s++) {
                bestS = Stats.median(gbps[s]) > Stats.median(gbps[bestS]) ? s : bestS;
            }
            double threadedBest = Stats.median(gbps[bestT]);
            out.printf(Locale.ROOT, "%-28s %10s %8s %8s %12s%n", "reader", "GB/s", "min", "max", "x threaded");
            for (int i = 0; i < nt + ns; i++) {
                String name = i < nt ? "cuFileRead, " + o.threads().get(i) + " thread" + (o.threads().get(i) == 1 ? "" : "s")
                        : "cuFileReadAsync, " + o.streams().get(i - nt) + " stream" + (o.streams().get(i - nt) == 1 ? "" : "s");
                out.printf(Locale.ROOT, "%-28s %10.3f %8.3f %8.3f %12.2f%n", name, Stats.median(gbps[i]), Stats.min(gbps[i]),
                        Stats.max(gbps[i]), Stats.median(gbps[i]) / threadedBest);
            }
            Comparison c = new Comparison(m, slot, o.threads().get(bestT), threadedBest, o.streams().get(bestS - nt),
                    Stats.median(gbps[bestS]));
            out.printf(Locale.ROOT, "async/threaded %.2f (%d streams %.3f GB/s against %d threads %.3f GB/s): keep %s%n",
                    c.ratio(), c.streams(), c.asyncGbps(), c.threads(), c.threadedGbps(), c.keep());
            return c;
        }
    }
}
