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
 * @param order the record order every path loaded in: "sequential", or the shuffle and its seed
 *     ("GLOBAL shuffle, seed 42")
 * @param gather the gather ceiling measured in the same run (a shuffled run on a GPU), or null
 */
public record BenchReport(long dataBytes, int batchRecords, int rounds, double ceilingGbps, boolean ceilingDirect,
                          boolean ceilingCold, List<BenchRow> rows, List<String> notes, String order,
                          GatherCeiling.Result gather) {
    /** Label of the gather ceiling's row in the table and the report files. */
    public static final String GATHER_ROW = "gather ceiling";

    /**
     * A report of a sequential run without a gather ceiling.
     *
     * @param dataBytes useful bytes per epoch
     * @param batchRecords records per batch
     * @param rounds rounds run
     * @param ceilingGbps median raw ceiling, GB/s
     * @param ceilingDirect whether the ceiling used {@code O_DIRECT}
     * @param ceilingCold whether the cache was dropped before every ceiling measurement
     * @param rows one per path run
     * @param notes lines to print after the table
     */
    public BenchReport(long dataBytes, int batchRecords, int rounds, double ceilingGbps, boolean ceilingDirect,
                       boolean ceilingCold, List<BenchRow> rows, List<String> notes) {
        this(dataBytes, batchRecords, rounds, ceilingGbps, ceilingDirect, ceilingCold, rows, notes, "sequential", null);
    }

    /** @return true if every row's checksum is OK or unchecked */
    public boolean allChecksumsOk() {
        return rows.stream().noneMatch(r -> r.checksum().startsWith("FAILED")) && (gather == null || gather.byteExact());
    }

    /**
     * Prints the table: one row per path plus the ceiling (and the gather ceiling, when measured), GB/s = 1e9 bytes/s,
     * CPU s/GB = process CPU seconds per 1e9 bytes delivered, heap B/batch = heap bytes the loader allocated per batch in
     * steady state ({@link BenchRow#heapBytesPerBatch()}).
     *
     * @param out where to print
     */
    public void print(PrintStream out) {
        out.printf(Locale.ROOT, "data: %.3f GB per epoch, %d records per batch, %s, %d round%s (medians)%n",
                dataBytes / 1e9, batchRecords, order == null ? "sequential" : order, rounds, rounds == 1 ? "" : "s");
        out.printf(Locale.ROOT, "%-18s %-14s %8s %15s %8s %10s %9s %-11s %-5s %8s %12s%n",
                "path", "taken", "GB/s", "min-max", "batches", "stall ms", "x ceiling", "checksum", "cache", "CPU s/GB",
                "heap B/batch");
        out.printf(Locale.ROOT, "%-18s %-14s %8.3f %15s %8s %10s %9s %-11s %-5s %8s %12s%n",
                "raw O_DIRECT read", ceilingDirect ? "O_DIRECT" : "buffered", ceilingGbps, "-", "-", "-",
                "1.00", "-", ceilingCold ? "cold" : "warm", "-", "-");
        if (gather != null) {
            out.printf(Locale.ROOT, "%-18s %-14s %8.3f %15s %8s %10s %9s %-11s %-5s %8s %12s%n", GATHER_ROW, "GATHER",
                    gather.gigabytesPerSecond(), "-", "-", "-", "-", gather.byteExact() ? "OK" : "FAILED", "host", "-", "-");
        }
        for (BenchRow r : rows) {
            out.printf(Locale.ROOT, "%-18s %-14s %8.3f %15s %8d %10.1f %9.2f %-11s %-5s %8s %12s%n",
                    r.requested(), r.taken(), r.gbps(), String.format(Locale.ROOT, "%.3f-%.3f", r.minGbps(), r.maxGbps()),
                    r.batches(), r.stallMillis(), r.ceilingRatio(), r.checksum(), r.cold() ? "cold" : "warm",
                    cpu(r.cpuSecondsPerGigabyte()), heap(r.heapBytesPerBatch()));
        }
        notes.forEach(out::println);
    }

    /** @return heap bytes per batch, whole bytes, or "-" where unknown */
    static String heap(double bytesPerBatch) {
        return Double.isFinite(bytesPerBatch) ? String.format(Locale.ROOT, "%.0f", bytesPerBatch) : "-";
    }

    /** @return CPU s/GB with 3 decimals, or "-" where unknown */
    static String cpu(double secondsPerGigabyte) {
        return Double.isFinite(secondsPerGigabyte) ? String.format(Locale.ROOT, "%.3f", secondsPerGigabyte) : "-";
    }
}
