package dev.gdsloader.bench;

import dev.gdsloader.loader.ReadPath;
import java.nio.file.Path;
import java.util.List;

/**
 * What one benchmark run measures.
 *
 * @param data dataset directory
 * @param paths paths to run; empty means every path this machine can do (GDS, BOUNCE, HOST)
 * @param batchBytes target bytes per batch; the batch size in records is {@code max(1, batchBytes / sampleBytes)}
 * @param ioThreads I/O threads of the loader and of the ceiling measurement
 * @param maxIoBytes request size of the loader and of the ceiling measurement (multiple of 4 KiB)
 * @param prefetchDepth slots in the ring
 * @param dropCaches drop the page cache before the ceiling and before each path (cold reads)
 * @param verify check every batch's CRC32C against the file after it reached its destination
 * @param rounds how many times to run every path (path order rotated each round); medians are reported
 */
public record BenchConfig(Path data, List<ReadPath> paths, long batchBytes, int ioThreads, long maxIoBytes,
                          int prefetchDepth, boolean dropCaches, boolean verify, int rounds) {
    /** @throws IllegalArgumentException if a size or count is not positive */
    public BenchConfig {
        if (batchBytes <= 0 || ioThreads <= 0 || maxIoBytes <= 0 || prefetchDepth < 2 || rounds < 1) {
            throw new IllegalArgumentException("batch bytes, I/O threads, I/O size and rounds must be > 0 and prefetch depth >= 2");
        }
        paths = List.copyOf(paths);
    }
}
