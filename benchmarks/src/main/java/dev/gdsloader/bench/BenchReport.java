package dev.gdsloader.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * Everything one run measured: the raw ceiling, one row per path, and notes (paths that did not run
 * and why, cache state, the ceiling's spread).
 *
 * @param dataBytes useful bytes per epoch
 * @param batchRecords records per batch
 * @param rounds rounds run
 * @param ceilingGbps median raw {@code O_DIRECT} read ceiling of the same data over the rounds, GB/s
 * @param ceilingDirect whether the ceiling used {@code O_DIRECT} on every file
 * @param ceilingCold whether the cache was dropped before every ceiling measurement
 * @param rows one per path run
 * @param notes lines to print after the table
 */
public record BenchReport(long dataBytes, int batchRecords, int rounds, double ceilingGbps, boolean ceilingDirect,
                          boolean ceilingCold, List<BenchRow> rows, List<String> notes) {

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
        out.printf(Locale.ROOT, "data: %.3f GB per epoch, %d records per batch, %d round%s (medians)%n",
                dataBytes / 1e9, batchRecords, rounds, rounds == 1 ? "" : "s");
        out.printf(Locale.ROOT, "%-18s %-14s %8s %15s %8s %10s %9s %-11s %s%n",
                "path", "taken", "GB/s", "min-max", "batches", "stall ms", "x ceiling", "checksum", "cache");
        out.printf(Locale.ROOT, "%-18s %-14s %8.3f %15s %8s %10s %9s %-11s %s%n",
                "raw O_DIRECT read", ceilingDirect ? "O_DIRECT" : "buffered", ceilingGbps, "-", "-", "-",
                "1.00", "-", ceilingCold ? "cold" : "warm");
        for (BenchRow r : rows) {
            out.printf(Locale.ROOT, "%-18s %-14s %8.3f %15s %8d %10.1f %9.2f %-11s %s%n",
                    r.requested(), r.taken(), r.gbps(), String.format(Locale.ROOT, "%.3f-%.3f", r.minGbps(), r.maxGbps()),
                    r.batches(), r.stallMillis(), r.ceilingRatio(), r.checksum(), r.cold() ? "cold" : "warm");
        }
        notes.forEach(out::println);
    }
}
