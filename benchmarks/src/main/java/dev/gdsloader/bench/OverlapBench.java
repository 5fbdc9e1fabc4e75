package dev.gdsloader.bench;

import dev.gdsloader.cuda.CudaModule;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.LoaderStats;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Measures how well the loader overlaps its I/O with the consumer's GPU work: the consumer launches a
 * kernel that runs for {@code t_c} per batch on its own stream (waiting on the batch's ready event, releasing
 * the batch on that stream: no host synchronisation), and the epoch time is compared with
 * {@code max(t_c, t_io) x batches}, where {@code t_io} is the loader's time per batch with no compute,
 * measured in the same run (each setting three times, interleaved with the baseline; medians). A ratio of 1.00
 * is perfect overlap. Not thread-safe.
 */
public final class OverlapBench {
    /** Times every setting runs; medians are reported. */
    static final int ROUNDS = 3;

    private OverlapBench() {
    }

    /**
     * One consumer-compute setting.
     *
     * @param computeNanos t_c per batch
     * @param ioNanos t_io per batch (from the run without compute)
     * @param batches batches in the epoch
     * @param epochNanos measured epoch time
     * @param stallMillis time the consumer waited for data
     */
    public record Row(long computeNanos, long ioNanos, long batches, long epochNanos, double stallMillis) {
        /** @return epoch time over {@code max(t_c, t_io) x batches}; 1.00 is perfect overlap */
        public double ratio() {
            return epochNanos / (double) (Math.max(computeNanos, ioNanos) * batches);
        }
    }

    /**
     * @param data dataset directory
     * @param options the loader's options: batch size set, path GDS or BOUNCE (a device path), {@code directIo}
     *     true for {@code O_DIRECT} (storage) or false for buffered reads (page cache, steadier t_io), prefetch
     *     depth: how much per-batch jitter of t_io and t_c the ring absorbs
     * @param factors t_c as multiples of the measured t_io, e.g. {0.5, 1, 2}
     * @param log progress lines
     * @return one row for t_c = 0, then one per factor
     * @throws IOException if the dataset cannot be read
     */
    public static List<Row> run(Path data, LoaderOptions options, double[] factors, PrintStream log) throws IOException {
        try (GdsLoader loader = GdsLoader.builder(data).options(options).build();
             CudaStream stream = CudaStream.create();
             CudaModule spin = CudaModule.load(spinPtx())) {
            epoch(loader, stream, spin, 0); // warm-up: page cache, JIT, first-launch costs
            // storage throughput drifts between runs: every setting runs ROUNDS times, interleaved with the
            // no-compute baseline, and medians are compared
            long[] base = new long[ROUNDS];
            long[][] times = new long[factors.length][ROUNDS];
            double[][] stalls = new double[factors.length + 1][ROUNDS];
            long batches = 0;
            for (int r = 0; r < ROUNDS; r++) {
                Row io = epoch(loader, stream, spin, 0);
                base[r] = io.epochNanos();
                stalls[0][r] = io.stallMillis();
                batches = io.batches();
                long tio = io.epochNanos() / Math.max(1, io.batches());
                for (int f = 0; f < factors.length; f++) {
                    Row row = epoch(loader, stream, spin, (long) (factors[f] * tio));
                    times[f][r] = row.epochNanos();
                    stalls[f + 1][r] = row.stallMillis();
                }
                log.printf(Locale.ROOT, "round %d of %d done%n", r + 1, ROUNDS);
            }
            long baseMedian = (long) Stats.median(java.util.Arrays.stream(base).asDoubleStream().toArray());
            long tio = baseMedian / Math.max(1, batches);
            List<Row> rows = new ArrayList<>();
            rows.add(new Row(0, tio, batches, baseMedian, Stats.median(stalls[0])));
            for (int f = 0; f < factors.length; f++) {
                long median = (long) Stats.median(java.util.Arrays.stream(times[f]).asDoubleStream().toArray());
                rows.add(new Row((long) (factors[f] * tio), tio, batches, median, Stats.median(stalls[f + 1])));
            }
            return rows;
        }
    }

    private static Row epoch(GdsLoader loader, CudaStream stream, CudaModule spin, long computeNanos) {
        long t0 = System.nanoTime();
        long batches = 0;
        for (Batch b : loader) {
            b.awaitOn(stream);
            if (computeNanos > 0) {
                spin.launch("spin", 1, 1, stream, computeNanos);
            }
            b.release(stream);
            batches++;
        }
        stream.synchronize();
        LoaderStats s = loader.stats();
        return new Row(computeNanos, 0, batches, System.nanoTime() - t0, s.stallMillis());
    }

    /**
     * Prints the rows as a table.
     *
     * @param rows the rows
     * @param out where to print
     */
    public static void print(List<Row> rows, PrintStream out) {
        out.printf(Locale.ROOT, "%10s %10s %8s %12s %22s %10s%n", "t_c ms", "t_io ms", "batches", "epoch ms",
                "epoch/(max(tc,tio)xN)", "stall ms");
        for (Row r : rows) {
            out.printf(Locale.ROOT, "%10.3f %10.3f %8d %12.1f %22.3f %10.1f%n", r.computeNanos() / 1e6, r.ioNanos() / 1e6,
                    r.batches(), r.epochNanos() / 1e6, r.ratio(), r.stallMillis());
        }
    }

    static String spinPtx() throws IOException {
        try (InputStream in = OverlapBench.class.getResourceAsStream("spin.ptx")) {
            if (in == null) {
                throw new IOException("spin.ptx missing from the benchmarks jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }
}
