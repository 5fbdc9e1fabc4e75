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
 * @param directIo staged paths read with {@code O_DIRECT} (storage); false: buffered (page cache)
 */
public record BenchConfig(Path data, List<ReadPath> paths, long batchBytes, int ioThreads, long maxIoBytes,
                          int prefetchDepth, boolean dropCaches, boolean verify, int rounds, boolean directIo) {
    /** The most {@code --rounds}: each round runs every path over the whole dataset. */
    public static final int MAX_ROUNDS = 1000;

    /** @throws IllegalArgumentException if a size or count is not positive */
    public BenchConfig {
        if (batchBytes <= 0) {
            throw new IllegalArgumentException("--batch-bytes must be > 0, got " + batchBytes);
        }
        if (ioThreads < 1 || ioThreads > 256) {
            throw new IllegalArgumentException("--threads must be 1..256, got " + ioThreads);
        }
        if (maxIoBytes < 4096 || maxIoBytes % 4096 != 0 || maxIoBytes > (1L << 30)) {
            throw new IllegalArgumentException("--io-size must be a multiple of 4096 bytes in 4KiB..1GiB (O_DIRECT alignment), got "
                    + maxIoBytes);
        }
        if (prefetchDepth < 1 || prefetchDepth > 64) {
            throw new IllegalArgumentException("--depth must be 1..64 slots, got " + prefetchDepth);
        }
        if (rounds < 1 || rounds > MAX_ROUNDS) {
            throw new IllegalArgumentException("--rounds must be 1.." + MAX_ROUNDS + ", got " + rounds);
        }
        paths = List.copyOf(paths);
    }
}
