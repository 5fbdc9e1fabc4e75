package dev.gdsloader.service;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.logging.Logger;

/**
 * A per-batch latency trace of the CUDA IPC exchange (issue 12): for each named stage, the durations of its
 * occurrences in nanoseconds ({@link System#nanoTime()}), summarized as count, median, p90, p99 and max in
 * microseconds and the stage's total as a share of a wall time.
 *
 * <p>Off unless the system property {@value #PROPERTY} is {@code true} when the trace is created ({@link #create});
 * an off trace records nothing and allocates nothing ({@link #start()} returns 0, {@link #stop} returns at once). An
 * on trace preallocates {@code capacity} longs per stage (and as many marks); each stage keeps its first
 * {@code capacity} durations for the percentiles, while its count, sum and max cover every occurrence.
 *
 * <p>Percentiles are nearest-rank: the p-th of n sorted durations is the {@code ceil(p/100 * n)}-th (the median of
 * 1..100 is 50, p90 is 90, p99 is 99).
 *
 * <p>Thread-safety: each stage (and {@link #mark}/{@link #stopSinceMark} for one id) must be recorded by one thread
 * at a time, and {@link #summary}/{@link #stats}/{@link #reset} need a happens-before edge with the recording threads
 * (e.g. a monitor both hold). {@link #publish} and {@link #drainPublished} are thread-safe.
 */
public final class IpcTrace {
    /** The system property that turns tracing on: {@code -Dgdsloader.ipcTrace=true}. */
    public static final String PROPERTY = "gdsloader.ipcTrace";
    /** Durations kept per stage of an on trace (and marks kept), by default: 65536 (512 KiB per stage). */
    public static final int DEFAULT_CAPACITY = 1 << 16;
    private static final int PUBLISHED_KEPT = 512;
    private static final Logger LOG = Logger.getLogger(IpcTrace.class.getName());
    private static final ArrayDeque<String> PUBLISHED = new ArrayDeque<>();

    private final String name;
    private final String[] stages;
    private final boolean on;
    private final long[][] samples;
    private final long[] counts;
    private final long[] sums;
    private final long[] maxes;
    private final long[] marks;
    private long resetAt;

    private IpcTrace(String name, String[] stages, boolean on, int capacity) {
        if (stages.length == 0) {
            throw new IllegalArgumentException("a trace needs at least one stage");
        }
        if (on && (capacity < 1 || Integer.bitCount(capacity) != 1)) {
            throw new IllegalArgumentException("trace capacity must be a power of two >= 1, got " + capacity);
        }
        this.name = name;
        this.stages = stages.clone();
        this.on = on;
        int n = on ? stages.length : 0;
        this.samples = new long[n][on ? capacity : 0];
        this.counts = new long[n];
        this.sums = new long[n];
        this.maxes = new long[n];
        this.marks = new long[on ? capacity : 0];
        this.resetAt = System.nanoTime();
    }

    /** @return whether the system property {@value #PROPERTY} is {@code true} now */
    public static boolean enabled() {
        return Boolean.getBoolean(PROPERTY);
    }

    /**
     * @param name what is traced, starting each summary line (e.g. {@code "server session 3"})
     * @param stages the stages' names, indexed from 0 in {@link #stop}
     * @return a trace that is on ({@link #DEFAULT_CAPACITY}) if {@link #enabled()}, else off
     * @throws IllegalArgumentException if there are no stages
     */
    public static IpcTrace create(String name, String... stages) {
        return of(enabled(), name, DEFAULT_CAPACITY, stages);
    }

    /**
     * @param on whether the trace records
     * @param name what is traced, starting each summary line
     * @param capacity durations kept per stage for the percentiles and marks kept (a power of two), when on
     * @param stages the stages' names, indexed from 0
     * @return a new trace
     * @throws IllegalArgumentException if there are no stages, or the trace is on and capacity is not a power of two
     */
    public static IpcTrace of(boolean on, String name, int capacity, String... stages) {
        return new IpcTrace(name, stages, on, capacity);
    }

    /** @return whether this trace records */
    public boolean on() {
        return on;
    }

    /** @return the start of an occurrence for {@link #stop}: {@link System#nanoTime()} if on, else 0 (no call) */
    public long start() {
        return on ? System.nanoTime() : 0;
    }

    /**
     * Records the occurrence of {@code stage} that began at {@code start}; nothing if off.
     *
     * @param stage the stage's index
     * @param start what {@link #start()} returned
     * @throws ArrayIndexOutOfBoundsException if on and there is no such stage
     */
    public void stop(int stage, long start) {
        if (on) {
            record(stage, System.nanoTime() - start);
        }
    }

    /**
     * Records one occurrence of {@code stage} lasting {@code nanos}; nothing if off.
     *
     * @param stage the stage's index
     * @param nanos its duration in nanoseconds
     * @throws ArrayIndexOutOfBoundsException if on and there is no such stage
     */
    public void record(int stage, long nanos) {
        if (!on) {
            return;
        }
        long n = counts[stage]++;
        long[] s = samples[stage];
        if (n < s.length) {
            s[(int) n] = nanos;
        }
        sums[stage] += nanos;
        if (nanos > maxes[stage]) {
            maxes[stage] = nanos;
        }
    }

    /**
     * Notes the time now for {@code id} (e.g. a batch lent), for a later {@link #stopSinceMark}; nothing if off. Ids
     * {@code capacity} apart share a mark: at most {@code capacity} ids may be outstanding at once.
     *
     * @param id a non-negative id
     */
    public void mark(long id) {
        if (on) {
            marks[(int) (id & (marks.length - 1))] = System.nanoTime();
        }
    }

    /**
     * Records an occurrence of {@code stage} from {@link #mark}{@code (id)} to now; nothing if off.
     *
     * @param stage the stage's index
     * @param id the id marked
     */
    public void stopSinceMark(int stage, long id) {
        if (on) {
            record(stage, System.nanoTime() - marks[(int) (id & (marks.length - 1))]);
        }
    }

    /** Forgets every occurrence, and restarts {@link #sinceReset()}. */
    public void reset() {
        Arrays.fill(counts, 0);
        Arrays.fill(sums, 0);
        Arrays.fill(maxes, 0);
        resetAt = System.nanoTime();
    }

    /** @return nanoseconds since this trace was created or last {@link #reset()} */
    public long sinceReset() {
        return System.nanoTime() - resetAt;
    }

    /**
     * One stage's statistics, all durations in nanoseconds (0 when count is 0).
     *
     * @param count occurrences
     * @param kept occurrences whose durations the percentiles cover (the first {@code capacity})
     * @param median nearest-rank 50th percentile
     * @param p90 nearest-rank 90th percentile
     * @param p99 nearest-rank 99th percentile
     * @param max the longest occurrence
     * @param sum the total of every occurrence
     */
    public record Stats(long count, int kept, long median, long p90, long p99, long max, long sum) {
    }

    /**
     * @param stage the stage's index
     * @return its statistics (all 0 if off or never recorded)
     * @throws ArrayIndexOutOfBoundsException if on and there is no such stage
     */
    public Stats stats(int stage) {
        if (!on || counts[stage] == 0) {
            return new Stats(0, 0, 0, 0, 0, 0, 0);
        }
        int kept = (int) Math.min(counts[stage], samples[stage].length);
        long[] sorted = Arrays.copyOf(samples[stage], kept);
        Arrays.sort(sorted);
        return new Stats(counts[stage], kept, rank(sorted, 50), rank(sorted, 90), rank(sorted, 99), maxes[stage],
                sums[stage]);
    }

    private static long rank(long[] sorted, int percent) {
        int r = (int) Math.ceil(percent / 100.0 * sorted.length);
        return sorted[Math.max(r, 1) - 1];
    }

    /**
     * One line per stage: {@code NAME STAGE: n=N median=M p90=P p99=Q max=X us, sum=S ms = F% of W s wall}.
     *
     * @param wallNanos the wall time the stages' sums are a share of, in nanoseconds
     * @return the lines, in stage order; empty if off
     */
    public List<String> summary(long wallNanos) {
        List<String> lines = new ArrayList<>();
        if (!on) {
            return lines;
        }
        for (int i = 0; i < stages.length; i++) {
            Stats s = stats(i);
            lines.add(String.format(Locale.ROOT,
                    "%s %s: n=%d median=%.1f p90=%.1f p99=%.1f max=%.1f us, sum=%.3f ms = %.1f%% of %.3f s wall%s",
                    name, stages[i], s.count(), s.median() / 1e3, s.p90() / 1e3, s.p99() / 1e3, s.max() / 1e3,
                    s.sum() / 1e6, wallNanos > 0 ? 100.0 * s.sum() / wallNanos : Double.NaN, wallNanos / 1e9,
                    s.kept() < s.count() ? " (percentiles of the first " + s.kept() + ")" : ""));
        }
        return lines;
    }

    /**
     * Logs {@code lines} (INFO) and keeps them (the last 512) for {@link #drainPublished()}: how a server's traces
     * reach a tool in its process ({@code serve-bench}).
     *
     * @param lines summary lines
     */
    public static void publish(List<String> lines) {
        synchronized (PUBLISHED) {
            for (String l : lines) {
                LOG.info("gdsloader ipc-trace: " + l);
                if (PUBLISHED.size() == PUBLISHED_KEPT) {
                    PUBLISHED.removeFirst();
                }
                PUBLISHED.addLast(l);
            }
        }
    }

    /** @return the lines {@link #publish}ed since the last drain, oldest first; they are forgotten */
    public static List<String> drainPublished() {
        synchronized (PUBLISHED) {
            List<String> l = List.copyOf(PUBLISHED);
            PUBLISHED.clear();
            return l;
        }
    }
}
