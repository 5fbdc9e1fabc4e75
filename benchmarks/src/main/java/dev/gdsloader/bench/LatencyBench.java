package dev.gdsloader.bench;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
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
     * @param options the loader's options (batch size set; capped at the dataset's records, with a note);
     *     {@code directIo} chooses {@code O_DIRECT} or buffered reads served from the page cache
     * @param epochs epochs over which allocation is measured, &ge; 1
     * @param out where the results go
     * @throws IOException if the dataset cannot be read or holds no records
     * @throws IllegalArgumentException if the batch size is not set
     */
    public static void run(Path data, LoaderOptions options, int epochs, PrintStream out) throws IOException {
        int requested = options.requireBatchSize().batchSize();
        int records = BenchRunner.recordsPerBatch(data, dev.gdsloader.loader.dataset.Dataset.open(data, options.columns()),
                requested, null);
        if (records < requested) {
            out.printf(Locale.ROOT, "note: a batch of %d records is more than the dataset's %d; each batch is capped at all "
                    + "of its records%n", requested, records);
            options = options.withBatchSize(records);
        }
        drain(data, options); // warm the page cache and the JIT
        drain(data, options);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long t0 = System.nanoTime();
        try (GdsLoader loader = GdsLoader.builder(data).options(options).build()) {
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
            out.printf(Locale.ROOT, "path %s, %d records per batch, %s%n", loader.pathTaken(), options.batchSize(),
                    loader.options().directIo() ? "O_DIRECT reads" : "buffered reads from the page cache");
            out.printf(Locale.ROOT, "build (open shards, pick path, allocate %d slots): %8.1f ms%n", loader.options().prefetchDepth(),
                    (built - t0) / 1e6);
            out.printf(Locale.ROOT, "first batch after iterator():                      %8.1f ms%n", (first - built) / 1e6);
            out.printf(Locale.ROOT, "heap allocated per batch, %d epochs, %d batches:  %8.0f bytes%n", epochs, batches,
                    allocated / (double) Math.max(1, batches));
        }
    }

    /**
     * One epoch of a warm-up loader, built as the measured one is. Its line saying which path {@code AUTO} chose (INFO)
     * is held back: it would repeat the measured loader's, which says it once.
     */
    private static void drain(Path data, LoaderOptions options) throws IOException {
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(GdsLoader.class.getName());
        java.util.logging.Level level = log.getLevel();
        if (log.isLoggable(java.util.logging.Level.INFO) && !log.isLoggable(java.util.logging.Level.FINE)) {
            log.setLevel(java.util.logging.Level.WARNING); // warnings (reads blocked at close) still go out
        }
        try (GdsLoader loader = GdsLoader.builder(data).options(options).build()) {
            for (Batch b : loader) {
                b.close();
            }
        } finally {
            log.setLevel(level);
        }
    }
}
