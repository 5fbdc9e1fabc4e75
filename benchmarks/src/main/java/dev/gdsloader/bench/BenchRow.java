package dev.gdsloader.bench;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;

/**
 * One path's result over all rounds of a run.
 *
 * @param requested the path asked for
 * @param taken how the bytes really travelled
 * @param gbps median delivered throughput over the rounds, GB/s (1e9 bytes/s)
 * @param minGbps slowest round, GB/s
 * @param maxGbps fastest round, GB/s
 * @param batches batches per epoch
 * @param stallMillis median time the consumer waited for batches, ms
 * @param checksum "OK" (every batch of every round), "FAILED (n)" or "not checked"
 * @param ceilingRatio median over the rounds of GB/s divided by that round's raw {@code O_DIRECT} ceiling
 * @param cold whether the page cache was dropped right before every round of this path
 * @param cpuSecondsPerGigabyte median over the rounds of the process's CPU seconds per 1e9 bytes delivered (every
 *     thread, the JIT and GC included, from the first batch asked for to the last released; the benchmark's own
 *     checking of the batches, on its consumer thread, is taken out); NaN where the JVM cannot tell
 * @param heapBytesPerBatch the lowest over the rounds of the heap bytes the loader allocated per batch in steady state
 *     (the batches after the first prefetch-depth ones; the lowest round, as a process's first rounds also pay the JVM's
 *     one-time costs): its threads and the consumer's calls into it, the benchmark's own checking and other threads taken
 *     out ({@link LoaderHeap}); NaN where the JVM cannot tell
 */
public record BenchRow(ReadPath requested, PathTaken taken, double gbps, double minGbps, double maxGbps, long batches,
                       double stallMillis, String checksum, double ceilingRatio, boolean cold, double cpuSecondsPerGigabyte,
                       double heapBytesPerBatch) {
    /**
     * A row without a heap figure (NaN).
     *
     * @param requested the path asked for
     * @param taken how the bytes really travelled
     * @param gbps median GB/s
     * @param minGbps slowest round, GB/s
     * @param maxGbps fastest round, GB/s
     * @param batches batches per epoch
     * @param stallMillis median consumer wait, ms
     * @param checksum the verdict
     * @param ceilingRatio median ratio to the ceiling
     * @param cold whether the page cache was dropped before every round
     * @param cpuSecondsPerGigabyte median CPU seconds per 1e9 bytes, NaN where unknown
     */
    public BenchRow(ReadPath requested, PathTaken taken, double gbps, double minGbps, double maxGbps, long batches,
                    double stallMillis, String checksum, double ceilingRatio, boolean cold, double cpuSecondsPerGigabyte) {
        this(requested, taken, gbps, minGbps, maxGbps, batches, stallMillis, checksum, ceilingRatio, cold,
                cpuSecondsPerGigabyte, Double.NaN);
    }

    /**
     * A row without a CPU time (NaN).
     *
     * @param requested the path asked for
     * @param taken how the bytes really travelled
     * @param gbps median GB/s
     * @param minGbps slowest round, GB/s
     * @param maxGbps fastest round, GB/s
     * @param batches batches per epoch
     * @param stallMillis median consumer wait, ms
     * @param checksum the verdict
     * @param ceilingRatio median ratio to the ceiling
     * @param cold whether the page cache was dropped before every round
     */
    public BenchRow(ReadPath requested, PathTaken taken, double gbps, double minGbps, double maxGbps, long batches,
                    double stallMillis, String checksum, double ceilingRatio, boolean cold) {
        this(requested, taken, gbps, minGbps, maxGbps, batches, stallMillis, checksum, ceilingRatio, cold, Double.NaN, Double.NaN);
    }
}
