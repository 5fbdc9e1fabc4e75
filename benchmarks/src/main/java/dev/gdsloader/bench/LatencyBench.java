package dev.gdsloader.bench;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.ReadPath;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Locale;

/**
 * Time to first batch and steady-state heap allocation per batch. The data is read once first so it is
 * in the page cache; then a fresh loader is built (timed), its first batch taken (timed), and the heap bytes
 * allocated by all threads of the process ({@code com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes})
 * over the following epochs are divided by their batches. Not thread-safe.
 */
public final class LatencyBench {
    private LatencyBench() {
    }

    /**
     * @param data dataset directory
     * @param path the read path
     * @param batchSize records per batch
     * @param epochs epochs over which allocation is measured, &ge; 1
     * @param out where the results go
     * @throws IOException if the dataset cannot be read
     */
    public static void run(Path data, ReadPath path, int batchSize, int epochs, PrintStream out) throws IOException {
        run(data, path, batchSize, epochs, true, out);
    }

    /**
     * @param data dataset directory
     * @param path the read path
     * @param batchSize records per batch, {@code >= 1}; capped at the dataset's records (with a note)
     * @param epochs epochs over which allocation is measured
     * @param directIo {@code O_DIRECT} reads, or buffered reads served from the page cache
     * @param out where the results go
     * @throws IOException if the dataset cannot be read or holds no records
     */
    public static void run(Path data, ReadPath path, int batchSize, int epochs, boolean directIo, PrintStream out)
            throws IOException {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1 record, got " + batchSize);
        }
        int requested = batchSize;
        batchSize = BenchRunner.recordsPerBatch(data, dev.gdsloader.loader.dataset.Dataset.open(data), requested, null);
        if (batchSize < requested) {
            out.printf(Locale.ROOT, "note: a batch of %d records is more than the dataset's %d; each batch is capped at all "
                    + "of its records%n", requested, batchSize);
        }
        drain(data, path, batchSize, directIo); // warm the page cache and the JIT
        drain(data, path, batchSize, directIo);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long t0 = System.nanoTime();
        try (GdsLoader loader = GdsLoader.builder(data).batchSize(batchSize).path(path).directIo(directIo).build()) {
            long built = System.nanoTime();
            Iterator<Batch> it = loader.iterator();
            it.next().close();
            long first = System.nanoTime();
            while (it.hasNext()) {
                it.next().close();
            }
            long batches = 0;
            long a0 = mx.getTotalThreadAllocatedBytes();
            for (int e = 0; e < epochs; e++) {
                for (Batch b : loader) {
                    b.close();
                    batches++;
                }
            }
            long allocated = mx.getTotalThreadAllocatedBytes() - a0;
            out.printf(Locale.ROOT, "path %s, %d records per batch, %s%n", loader.pathTaken(), batchSize,
                    directIo ? "O_DIRECT reads" : "buffered reads from the page cache");
            out.printf(Locale.ROOT, "build (open shards, pick path, allocate %d slots): %8.1f ms%n", loader.options().prefetchDepth(),
                    (built - t0) / 1e6);
            out.printf(Locale.ROOT, "first batch after iterator():                      %8.1f ms%n", (first - built) / 1e6);
            out.printf(Locale.ROOT, "heap allocated per batch, %d epochs, %d batches:  %8.0f bytes%n", epochs, batches,
                    allocated / (double) Math.max(1, batches));
        }
    }

    private static void drain(Path data, ReadPath path, int batchSize, boolean directIo) throws IOException {
        try (GdsLoader loader = GdsLoader.builder(data).batchSize(batchSize).path(path).directIo(directIo).build()) {
            for (Batch b : loader) {
                b.close();
            }
        }
    }
}
