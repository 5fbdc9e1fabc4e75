package dev.gdsloader.bench;

import dev.gdsloader.loader.LoaderStats;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.ReadPath;

/**
 * One path's result.
 *
 * @param requested the path asked for
 * @param taken how the bytes really travelled
 * @param stats the loader's counters for the epoch
 * @param checksum "OK", "FAILED (n batches)" or "not checked"
 * @param ceilingRatio GB/s over the raw {@code O_DIRECT} ceiling of the same run
 * @param cold whether the page cache was dropped right before this row
 */
public record BenchRow(ReadPath requested, PathTaken taken, LoaderStats stats, String checksum, double ceilingRatio,
                       boolean cold) {
}
