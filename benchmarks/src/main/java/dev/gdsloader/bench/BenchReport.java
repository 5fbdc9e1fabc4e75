package dev.gdsloader.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * Everything one run measured: the raw ceiling, one row per path, and notes (paths that did not run
 * and why, cache state).
 *
 * @param dataBytes useful bytes per epoch
 * @param batchRecords records per batch
 * @param ceiling the raw {@code O_DIRECT} read ceiling of the same data, same run
 * @param ceilingCold whether the cache was dropped before the ceiling
 * @param rows one per path run
 * @param notes lines to print after the table
 */
public record BenchReport(long dataBytes, int batchRecords, DirectReadCeiling.Result ceiling, boolean ceilingCold,
                          List<BenchRow> rows, List<String> notes) {

    /** @return true if every row's checksum is OK or unchecked */
    public boolean allChecksumsOk() {
        return rows.stream().noneMatch(r -> r.checksum().startsWith("FAILED"));
    }

    /**
     * Prints the table: one row per path plus the ceiling, GB/s = 1e9 bytes/s.
     *
     * @param out where to print
     */
    public void print(PrintStream out) {
        out.printf(Locale.ROOT, "data: %.3f GB per epoch, %d records per batch%n", dataBytes / 1e9, batchRecords);
        out.printf(Locale.ROOT, "%-20s %-14s %9s %8s %10s %10s %-12s %s%n",
                "path", "taken", "GB/s", "batches", "stall ms", "x ceiling", "checksum", "cache");
        out.printf(Locale.ROOT, "%-20s %-14s %9.3f %8s %10s %10s %-12s %s%n",
                "raw O_DIRECT read", ceiling.direct() ? "O_DIRECT" : "buffered", ceiling.gigabytesPerSecond(), "-", "-",
                "1.00", "-", ceilingCold ? "cold" : "warm");
        for (BenchRow r : rows) {
            out.printf(Locale.ROOT, "%-20s %-14s %9.3f %8d %10.1f %10.2f %-12s %s%n",
                    r.requested(), r.taken(), r.stats().gigabytesPerSecond(), r.stats().batches(),
                    r.stats().stallMillis(), r.ceilingRatio(), r.checksum(), r.cold() ? "cold" : "warm");
        }
        notes.forEach(out::println);
    }
}
