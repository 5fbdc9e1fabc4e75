package dev.gdsloader.bench;

import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.ReadPath;

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
 */
public record BenchRow(ReadPath requested, PathTaken taken, double gbps, double minGbps, double maxGbps, long batches,
                       double stallMillis, String checksum, double ceilingRatio, boolean cold) {
}
