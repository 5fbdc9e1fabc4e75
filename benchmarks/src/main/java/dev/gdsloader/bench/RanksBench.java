package dev.gdsloader.bench;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One loader per GPU in one process: rank {@code r} of {@code W} on device {@code r mod GPUs}, all over the same
 * dataset. Measures rank 0 alone, then all ranks at once, and checks that the ranks received disjoint records
 * that together cover the dataset exactly once. Not thread-safe.
 */
public final class RanksBench {
    private RanksBench() {
    }

    /**
     * One rank's epoch.
     *
     * @param rank the rank (and device)
     * @param records records received
     * @param bytes bytes received
     * @param nanos epoch time
     * @param seen the record indices received
     */
    public record RankRun(int rank, long records, long bytes, long nanos, BitSet seen) {
        /** @return GB/s, 1e9 bytes per second */
        public double gigabytesPerSecond() {
            return bytes / (double) nanos;
        }
    }

    /**
     * @param data dataset directory
     * @param world number of ranks = devices used
     * @param path the read path
     * @param batchSize records per batch
     * @param out where the table goes
     * @return true if the ranks were disjoint and covered every record once
     * @throws Exception if a loader fails
     */
    public static boolean run(Path data, int world, ReadPath path, int batchSize, PrintStream out) throws Exception {
        epoch(data, 0, world, path, batchSize); // warm-up: JIT, CUDA contexts, page cache
        RankRun alone = epoch(data, 0, world, path, batchSize);
        List<RankRun> together = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(world);
        try {
            List<Future<RankRun>> fs = new ArrayList<>();
            for (int r = 0; r < world; r++) {
                final int rank = r;
                fs.add(pool.submit((Callable<RankRun>) () -> epoch(data, rank, world, path, batchSize)));
            }
            for (Future<RankRun> f : fs) {
                together.add(f.get());
            }
        } finally {
            pool.shutdownNow();
        }
        BitSet union = new BitSet();
        long total = 0;
        boolean disjoint = true;
        for (RankRun r : together) {
            disjoint &= !union.intersects(r.seen());
            union.or(r.seen());
            total += r.records();
        }
        long records = dev.gdsloader.loader.dataset.Dataset.open(data).recordCount();
        boolean exact = disjoint && union.cardinality() == records && total == records;
        out.printf(Locale.ROOT, "%-22s %8s %10s %8s%n", "run", "records", "GB/s", "x alone");
        out.printf(Locale.ROOT, "%-22s %8d %10.3f %8.2f%n", "rank 0 alone (GPU 0)", alone.records(), alone.gigabytesPerSecond(), 1.0);
        for (RankRun r : together) {
            out.printf(Locale.ROOT, "%-22s %8d %10.3f %8.2f%n", "rank " + r.rank() + " of " + world + " (GPU " + deviceOf(r.rank()) + ")",
                    r.records(), r.gigabytesPerSecond(), r.gigabytesPerSecond() / alone.gigabytesPerSecond());
        }
        out.println("records: " + records + " in the dataset, " + total + " received over " + world + " ranks, "
                + (disjoint ? "disjoint" : "OVERLAPPING") + ", " + (exact ? "each exactly once" : "NOT each exactly once"));
        return exact;
    }

    /** Rank r runs on GPU r, wrapping around when there are fewer GPUs than ranks (they then share one). */
    private static int deviceOf(int rank) {
        return dev.gdsloader.cuda.Cuda.availability().available() ? rank % dev.gdsloader.cuda.CudaDevice.count() : 0;
    }

    private static RankRun epoch(Path data, int rank, int world, ReadPath path, int batchSize) throws IOException {
        try (GdsLoader loader = GdsLoader.builder(data).batchSize(batchSize).path(path).device(deviceOf(rank))
                .shuffle(Shuffle.SHARD_BLOCKS, 17).ranks(rank, world, Partition.EXACT_ONCE).build()) {
            BitSet seen = new BitSet();
            long records = 0;
            long bytes = 0;
            long t0 = System.nanoTime();
            for (Batch b : loader) {
                try (b) {
                    for (long id : b.recordIndices()) {
                        seen.set(Math.toIntExact(id));
                    }
                    records += b.records();
                    bytes += b.bytes();
                }
            }
            return new RankRun(rank, records, bytes, System.nanoTime() - t0, seen);
        }
    }
}
