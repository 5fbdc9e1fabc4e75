package dev.gdsloader.bench;

import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Path;
import java.util.List;

/**
 * What one benchmark run measures.
 *
 * @param data dataset directory
 * @param paths paths to run; empty means every path this machine can do (GDS, BOUNCE, HOST)
 * @param batchBytes target bytes per batch; the batch size in records is {@code max(1, batchBytes / sampleBytes)}
 * @param loader the options every path's loader runs with; the batch size and the path are set per run. Its I/O
 *     threads and largest read also size the ceiling measurement; {@code directIo} true reads staged paths with
 *     {@code O_DIRECT} (storage), false buffered (page cache), null as the loader's policy decides
 * @param dropCaches drop the page cache before the ceiling and before each path (cold reads)
 * @param verify check every batch's CRC32C against the file after it reached its destination
 * @param rounds how many times to run every path (path order rotated each round); medians are reported
 */
public record BenchConfig(Path data, List<ReadPath> paths, long batchBytes, LoaderOptions loader, boolean dropCaches,
                          boolean verify, int rounds) {
    /** The most {@code --rounds}: each round runs every path over the whole dataset. */
    public static final int MAX_ROUNDS = 1000;

    /**
     * @throws IllegalArgumentException if a size or count is not positive (the loader options were checked when made)
     * @throws NullPointerException if {@code loader} is null
     */
    public BenchConfig {
        if (batchBytes <= 0) {
            throw new IllegalArgumentException("--batch-bytes must be > 0, got " + batchBytes);
        }
        java.util.Objects.requireNonNull(loader, "loader");
        if (rounds < 1 || rounds > MAX_ROUNDS) {
            throw new IllegalArgumentException("--rounds must be 1.." + MAX_ROUNDS + ", got " + rounds);
        }
        paths = List.copyOf(paths);
    }
}
