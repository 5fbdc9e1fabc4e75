package dev.gdsloader.bench;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.posix.AlignedMemory;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sample-level shuffle against the storage's random-read rate, in one run: the ceiling reads every record
 * of a one-column dataset once, in a random order, with {@code O_DIRECT pread} of its 4 KiB-aligned cover on
 * T threads and no GPU; each loader path then loads one epoch with a global shuffle and T I/O threads.
 * Throughput counts useful record bytes. Not thread-safe.
 */
public final class RandomReadBench {
    private RandomReadBench() {
    }

    /**
     * @param data a dataset with one column
     * @param paths loader paths to measure
     * @param threads I/O threads of the ceiling and of the loader
     * @param batchSize records per batch
     * @param dropCaches drop the page cache before each measurement
     * @param out where the table goes
     * @throws Exception if reading fails
     */
    public static void run(Path data, List<ReadPath> paths, int threads, int batchSize, boolean dropCaches, PrintStream out)
            throws Exception {
        Dataset ds = Dataset.open(data);
        if (ds.columns().size() != 1) {
            throw new IllegalArgumentException(data + ": the random-read benchmark wants a dataset with one column, found "
                    + ds.columns().stream().map(Column::name).toList());
        }
        Column col = ds.columns().get(0);
        if (batchSize > col.recordCount()) { // a batch past the dataset would size slots and queues for records that do not exist
            out.printf(Locale.ROOT, "note: --batch-size %d is more than the dataset's %d records; one batch holds all of them%n",
                    batchSize, col.recordCount());
            batchSize = (int) Math.max(1, col.recordCount());
        }
        out.printf(Locale.ROOT, "%d records of %d bytes (data offset %d), %d threads, batch %d, %s%n", col.recordCount(),
                col.recordBytes(), col.shards().get(0).dataOffset(), threads, batchSize, dropCaches ? "cold" : "warm");
        out.printf(Locale.ROOT, "%-26s %12s %10s %10s%n", "reader", "records/s", "GB/s", "x ceiling");
        if (dropCaches) {
            PageCache.drop();
        }
        double ceiling = ceiling(col, threads);
        out.printf(Locale.ROOT, "%-26s %12.0f %10.3f %10.2f%n", "O_DIRECT pread, random", ceiling / col.recordBytes(),
                ceiling / 1e9, 1.0);
        for (ReadPath p : paths) {
            if (dropCaches) {
                PageCache.drop();
            }
            try (GdsLoader loader = GdsLoader.builder(ds).batchSize(batchSize).path(p).ioThreads(threads)
                    .shuffle(Shuffle.GLOBAL, 99).build()) {
                for (Batch b : loader) {
                    b.close();
                }
                double bps = loader.stats().gigabytesPerSecond() * 1e9;
                PathTaken taken = loader.pathTaken();
                out.printf(Locale.ROOT, "%-26s %12.0f %10.3f %10.2f%n", "loader " + taken + ", global shuffle",
                        bps / col.recordBytes(), bps / 1e9, bps / ceiling);
            }
        }
    }

    /** @return useful bytes per second of T threads reading every record once in a random order */
    private static double ceiling(Column col, int threads) throws Exception {
        long[] shardRecords = col.shards().stream().mapToLong(RecordLayout::recordCount).toArray();
        EpochOrder order = new Sampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 7),
                shardRecords, 1).order(0);
        List<PosixFile> files = new ArrayList<>();
        for (RecordLayout s : col.shards()) {
            files.add(PosixFile.openForRead(s.file(), true));
        }
        long rec = col.recordBytes();
        long cover = Alignment.up(rec + Alignment.BLOCK);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (AlignedMemory mem = new AlignedMemory(threads * cover)) {
            long t0 = System.nanoTime();
            List<Future<Long>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final long base = t * cover;
                fs.add(pool.submit(() -> {
                    long bytes = 0;
                    for (int i; (i = next.getAndIncrement()) < order.size(); ) {
                        long r = order.get(i);
                        int shard = col.shardOf(r);
                        RecordLayout s = col.shards().get(shard);
                        long off = s.dataOffset() + (r - col.firstRecordOf(shard)) * rec;
                        long start = Alignment.down(off);
                        long len = Alignment.up(off + rec) - start;
                        long n = files.get(shard).read(mem.segment(), base, len, start);
                        if (n < off + rec - start) {
                            throw new IOException(s.file() + ": short read at " + start);
                        }
                        bytes += rec;
                    }
                    return bytes;
                }));
            }
            long bytes = 0;
            for (Future<Long> f : fs) {
                bytes += f.get();
            }
            return bytes / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdownNow();
            files.forEach(PosixFile::close);
        }
    }
}
