package dev.gdsloader.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaModule;
import dev.gdsloader.cuda.CudaPeers;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.Nvrtc;
import dev.gdsloader.cuda.PinnedBuffer;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code gdsloader p2p}: the ways bytes move from one GPU's memory to another's, measured in one run for each transfer
 * size: host-staged (device to pinned host memory to device, in 8 MiB chunks on two streams so the halves overlap),
 * {@code cudaMemcpyPeerAsync} with peer access off (the driver stages through host memory itself) and on (over the
 * link), and a copy kernel on the source GPU writing into the peer's memory (peer access on); beside them the pinned
 * host-to-device ceiling of the destination. Every way's destination is cleared before its timed copies and read back
 * after them, and compared byte for byte with the source's pattern.
 *
 * <p>With {@code src == dst} (the degenerate one-GPU run) the peer ways are device-to-device copies within the GPU and
 * peer access is not touched. Allocates its buffers (two device buffers and three pinned ones of the largest size)
 * and frees them before returning; leaves peer access on between the pair (as most programs run with it). Not
 * thread-safe: one run at a time.
 */
public final class PeerCopyBench {
    private PeerCopyBench() {
    }

    /** A way of moving the bytes. */
    public enum Way {
        /** Device to pinned host memory, then pinned host memory to the peer, chunked over two streams. */
        HOST_STAGED,
        /** {@code cudaMemcpyPeerAsync} with peer access off both ways. */
        PEER_OFF,
        /** {@code cudaMemcpyPeerAsync} with peer access on both ways. */
        PEER_ON,
        /** A copy kernel on the source GPU storing 16-byte words into the peer's memory (peer access on). */
        KERNEL,
        /** The ceiling beside them: pinned host memory to the destination GPU. */
        PINNED_TO_DEVICE
    }

    /**
     * One measurement.
     *
     * @param bytes bytes per transfer
     * @param way how
     * @param transfers timed transfers
     * @param gbps transfers x bytes / elapsed, GB/s (1e9 B/s)
     * @param exact whether the destination held the source's bytes after the timed transfers
     */
    public record Row(long bytes, Way way, int transfers, double gbps, boolean exact) {
    }

    /**
     * A run.
     *
     * @param src source GPU ordinal
     * @param dst destination GPU ordinal
     * @param srcDevice the source GPU, in words (name, PCI bus id)
     * @param dstDevice the destination GPU, in words
     * @param canAccessPeer {@code cudaDeviceCanAccessPeer(dst, src)} and {@code (src, dst)}, both; false for one GPU
     * @param note what the run could not do, or how it was degenerate (empty when neither)
     * @param rows every size's ways, in order
     */
    public record Report(int src, int dst, String srcDevice, String dstDevice, boolean canAccessPeer, String note,
                         List<Row> rows) {
        /** Copies the list. */
        public Report {
            rows = List.copyOf(rows);
        }

        /** @return true if every row was byte-exact */
        public boolean allExact() {
            return rows.stream().allMatch(Row::exact);
        }
    }

    /** Chunk of the host-staged way: big enough to run at link speed, small enough for the halves to overlap. */
    static final long STAGE_CHUNK = 8L << 20;
    /** Bytes each measurement moves at least (small transfers repeat), capped at {@link #MAX_TRANSFERS}. */
    static final long BYTES_PER_MEASUREMENT = 2L << 30;
    /** Most timed transfers of one measurement. */
    static final int MAX_TRANSFERS = 200;

    /** The copy kernel: {@code copy_words(const uint4* src, uint4* dst, long long words)}, grid-stride. */
    static final String KERNEL_SOURCE = """
            extern "C" __global__ void copy_words(const uint4* src, uint4* dst, long long words) {
                long long stride = (long long) gridDim.x * blockDim.x;
                for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < words; i += stride) {
                    dst[i] = src[i];
                }
            }
            """;

    /**
     * @param bytes a transfer size
     * @return timed transfers for it: enough to move {@link #BYTES_PER_MEASUREMENT}, 3..{@link #MAX_TRANSFERS}
     */
    static int transfers(long bytes) {
        return (int) Math.max(3, Math.min(MAX_TRANSFERS, BYTES_PER_MEASUREMENT / bytes));
    }

    /**
     * @param sizes the sizes asked for, bytes
     * @throws IllegalArgumentException if there are none, or naming the first size that is not a positive multiple of
     *     16 bytes (the kernel moves 16-byte words)
     */
    public static void checkSizes(List<Long> sizes) {
        if (sizes.isEmpty()) {
            throw new IllegalArgumentException("p2p needs at least one transfer size");
        }
        for (long s : sizes) {
            if (s <= 0 || s % 16 != 0) {
                throw new IllegalArgumentException("transfer size " + s + " bytes: must be a positive multiple of 16 bytes");
            }
        }
    }

    /**
     * Measures every way at every size.
     *
     * @param src source GPU
     * @param dst destination GPU ({@code src} itself for the degenerate one-GPU comparison)
     * @param sizes transfer sizes in bytes, each a positive multiple of 16
     * @param progress where to print a line per measurement
     * @return the report
     * @throws IllegalArgumentException on a bad size
     * @throws dev.gdsloader.cuda.CudaException if CUDA fails (a bad ordinal, out of memory, a peer access refused)
     */
    public static Report run(int src, int dst, List<Long> sizes, PrintStream progress) {
        checkSizes(sizes);
        long max = sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
        boolean same = src == dst;
        CudaDevice s = CudaDevice.get(src);
        CudaDevice d = CudaDevice.get(dst);
        boolean peers = !same && CudaPeers.canAccessPeer(dst, src) && CudaPeers.canAccessPeer(src, dst);
        String note = same ? "one GPU: source and destination are GPU " + src + "; the peer ways are device-to-device "
                + "copies within it and peer access is not touched" : peers ? ""
                : "cudaDeviceCanAccessPeer is false for GPUs " + src + " and " + dst + ": PEER_ON and KERNEL are not measured";
        int previous = CudaDevice.current();
        CudaDevice.makeCurrent(dst);
        CudaDevice.makeCurrent(src);
        List<Row> rows = new ArrayList<>();
        try (PinnedBuffer pattern = PinnedBuffer.allocate(max);
             PinnedBuffer staging = PinnedBuffer.allocate(max);
             PinnedBuffer readback = PinnedBuffer.allocate(max);
             Resources r = new Resources(src, dst, max)) {
            fill(pattern.segment());
            r.srcStream.copyToDevice(r.srcBuf, 0, pattern, 0, max);
            r.srcStream.synchronize();
            for (long bytes : sizes) {
                for (Way w : Way.values()) {
                    if (!same && !peers && (w == Way.PEER_ON || w == Way.KERNEL)) {
                        continue;
                    }
                    Row row = measure(w, bytes, same, r, pattern, staging, readback);
                    rows.add(row);
                    progress.printf(Locale.ROOT, "%10s %-16s %8.2f GB/s  %s%n", size(bytes), w, row.gbps(),
                            row.exact() ? "byte-exact" : "NOT byte-exact");
                }
            }
        } finally {
            CudaDevice.use(previous);
        }
        return new Report(src, dst, describe(s), describe(d), peers, note, rows);
    }

    private static String describe(CudaDevice d) {
        return "GPU " + d.ordinal() + " " + d.name() + " (PCI " + d.pciBusId() + ", " + d.copyEngines() + " copy engines)";
    }

    /** The run's device buffers, streams, event and kernel, each on its GPU. */
    private static final class Resources implements AutoCloseable {
        final int src;
        final int dst;
        final DeviceBuffer srcBuf;
        final DeviceBuffer dstBuf;
        final CudaStream srcStream;
        final CudaStream dstStream;
        final CudaEvent staged;
        final CudaEvent drained;
        final CudaModule kernel;

        Resources(int src, int dst, long bytes) {
            this.src = src;
            this.dst = dst;
            List<AutoCloseable> made = new ArrayList<>();
            try {
                CudaDevice.use(dst);
                dstBuf = add(made, DeviceBuffer.allocate(bytes));
                dstStream = add(made, CudaStream.create());
                drained = add(made, CudaEvent.create());
                CudaDevice.use(src);
                srcBuf = add(made, DeviceBuffer.allocate(bytes));
                srcStream = add(made, CudaStream.create());
                staged = add(made, CudaEvent.create());
                kernel = add(made, CudaModule.load(Nvrtc.compileToPtx(KERNEL_SOURCE, "p2p-copy.cu", "--gpu-architecture=compute_90")));
            } catch (RuntimeException | Error e) {
                java.util.Collections.reverse(made);
                dev.gdsloader.memory.Closeables.closeAll(made.toArray(AutoCloseable[]::new));
                throw e;
            }
        }

        private static <T extends AutoCloseable> T add(List<AutoCloseable> made, T t) {
            made.add(t);
            return t;
        }

        @Override
        public void close() {
            CudaDevice.use(src);
            Exception e = dev.gdsloader.memory.Closeables.closeAll(srcStream::synchronize, kernel, staged, srcStream, srcBuf,
                    () -> CudaDevice.use(dst), dstStream::synchronize, drained, dstStream, dstBuf);
            if (e != null) {
                throw new IllegalStateException("p2p: freeing failed: " + e.getMessage(), e);
            }
        }
    }

    private static Row measure(Way w, long bytes, boolean same, Resources r, PinnedBuffer pattern, PinnedBuffer staging,
                               PinnedBuffer readback) {
        if (!same) {
            boolean on = w == Way.PEER_ON || w == Way.KERNEL;
            for (int[] pair : new int[][] {{r.src, r.dst}, {r.dst, r.src}}) {
                if (on) {
                    CudaPeers.enable(pair[0], pair[1]);
                } else if (w == Way.PEER_OFF) {
                    CudaPeers.disable(pair[0], pair[1]);
                }
            }
        }
        transfer(w, bytes, r, pattern, staging); // warm-up
        sync(r);
        CudaDevice.use(r.dst);
        r.dstStream.fill(r.dstBuf, 0, bytes, 0); // cleared in stream order: the timed transfers must write every byte
        r.dstStream.synchronize();
        int n = transfers(bytes);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            transfer(w, bytes, r, pattern, staging);
        }
        sync(r);
        long ns = System.nanoTime() - t0;
        CudaDevice.use(r.dst);
        r.dstStream.copyToHost(readback, 0, r.dstBuf, 0, bytes);
        r.dstStream.synchronize();
        boolean exact = readback.segment().asSlice(0, bytes).mismatch(pattern.segment().asSlice(0, bytes)) == -1;
        return new Row(bytes, w, n, (double) n * bytes / ns, exact);
    }

    private static void sync(Resources r) {
        CudaDevice.use(r.src);
        r.srcStream.synchronize();
        CudaDevice.use(r.dst);
        r.dstStream.synchronize();
    }

    /** Enqueues one transfer of {@code bytes} from the source buffer (or the pattern, for the ceiling) to the destination. */
    private static void transfer(Way w, long bytes, Resources r, PinnedBuffer pattern, PinnedBuffer staging) {
        switch (w) {
            case HOST_STAGED -> {
                CudaDevice.use(r.src);
                r.srcStream.waitFor(r.drained); // the previous transfer's copies out of the staging buffer are done
                for (long off = 0; off < bytes; off += STAGE_CHUNK) {
                    long n = Math.min(STAGE_CHUNK, bytes - off);
                    CudaDevice.use(r.src);
                    r.srcStream.copyToHost(staging, off, r.srcBuf, off, n);
                    r.staged.record(r.srcStream);
                    CudaDevice.use(r.dst);
                    r.dstStream.waitFor(r.staged); // waits for the record just made: one event serves every chunk
                    r.dstStream.copyToDevice(r.dstBuf, off, staging, off, n);
                }
                r.drained.record(r.dstStream);
            }
            case PEER_OFF, PEER_ON -> {
                CudaDevice.use(r.src);
                r.srcStream.copyPeer(r.dstBuf, 0, r.srcBuf, 0, bytes);
            }
            case KERNEL -> {
                CudaDevice.use(r.src);
                long words = bytes / 16;
                int blocks = (int) Math.max(1, Math.min(4096, (words + 255) / 256));
                r.kernel.launch("copy_words", blocks, 256, r.srcStream, r.srcBuf.address(), r.dstBuf.address(), words);
            }
            case PINNED_TO_DEVICE -> {
                CudaDevice.use(r.dst);
                r.dstStream.copyToDevice(r.dstBuf, 0, pattern, 0, bytes);
            }
        }
    }

    /** A pattern no two 8-byte words of which repeat within 2^64 words. */
    static void fill(MemorySegment m) {
        long words = m.byteSize() / 8;
        for (long i = 0; i < words; i++) {
            m.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L);
        }
        for (long b = words * 8; b < m.byteSize(); b++) {
            m.set(ValueLayout.JAVA_BYTE, b, (byte) b);
        }
    }

    /** @return e.g. "1 MiB", "1 GiB", or bytes */
    static String size(long bytes) {
        if (bytes % (1L << 30) == 0) {
            return bytes / (1L << 30) + " GiB";
        }
        return bytes % (1L << 20) == 0 ? bytes / (1L << 20) + " MiB" : bytes + " B";
    }

    /**
     * Writes {@code p2p.json} (the report) and {@code p2p.png} (GB/s against transfer size, one line per way; skipped,
     * saying so, where the runtime has no AWT) into {@code dir}.
     *
     * @param report the run
     * @param command the command line, recorded in the JSON
     * @param dir the output directory, made if absent
     * @return the files written
     * @throws IOException if a file cannot be written
     */
    public static List<Path> write(Report report, String command, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path json = dir.resolve("p2p.json");
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("command", command);
        doc.put("unit", "GB/s = 1e9 bytes/s");
        doc.put("report", report);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), doc);
        List<Path> out = new ArrayList<>(List.of(json));
        Path png = dir.resolve("p2p.png");
        try {
            plot(report, png);
            out.add(png);
        } catch (NoClassDefFoundError e) {
            System.err.println("no plot: this Java runtime lacks java.desktop (" + e.getMessage() + ")");
        }
        return out;
    }

    private static void plot(Report report, Path png) throws IOException {
        org.knowm.xchart.XYChart chart = new org.knowm.xchart.XYChartBuilder().width(800).height(500)
                .title("GPU " + report.src() + " -> GPU " + report.dst() + ": GB/s by transfer size")
                .xAxisTitle("transfer (MiB)").yAxisTitle("throughput (GB/s, 1e9 bytes/s)").build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        for (Way w : Way.values()) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (Row r : report.rows()) {
                if (r.way() == w) {
                    xs.add(r.bytes() / 1048576.0);
                    ys.add(r.gbps());
                }
            }
            if (!xs.isEmpty()) {
                chart.addSeries(w.name(), xs, ys);
            }
        }
        org.knowm.xchart.BitmapEncoder.saveBitmap(chart, png.toString(), org.knowm.xchart.BitmapEncoder.BitmapFormat.PNG);
    }
}
