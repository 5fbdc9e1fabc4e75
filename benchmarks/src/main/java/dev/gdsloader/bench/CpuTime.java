package dev.gdsloader.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time for the benchmarks' "CPU seconds per GB moved": the whole process's CPU time (every thread, the JIT and
 * the GC included), and the calling thread's, to take the benchmark's own checking out of it. The process's is
 * {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)} (through the FFM API, nanoseconds), the quantity
 * {@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime} reports, which on Linux steps in 10 ms clock
 * ticks (measured on JDK 25) and is the fallback where the call is not available. Stateless and thread-safe.
 */
final class CpuTime {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** {@code CLOCK_PROCESS_CPUTIME_ID} of Linux's {@code <time.h>} (bits/time.h: 2). */
    private static final int CLOCK_PROCESS_CPUTIME_ID = 2;
    private static final java.lang.invoke.MethodHandle CLOCK_GETTIME = clockGettime();

    private CpuTime() {
    }

    /** @return CPU time of this process so far, ns (all threads), or -1 where the platform's bean cannot tell */
    static long processNanos() {
        if (CLOCK_GETTIME != null) {
            try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
                java.lang.foreign.MemorySegment ts = a.allocate(16, 8); // struct timespec { long tv_sec; long tv_nsec; }
                if ((int) CLOCK_GETTIME.invokeExact(CLOCK_PROCESS_CPUTIME_ID, ts) == 0) {
                    return ts.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0) * 1_000_000_000L
                            + ts.get(java.lang.foreign.ValueLayout.JAVA_LONG, 8);
                }
            } catch (Throwable e) {
                // fall through to the bean
            }
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    @SuppressWarnings("restricted") // downcallHandle: clock_gettime(int, struct timespec*) of the C library, as declared
    private static java.lang.invoke.MethodHandle clockGettime() {
        try {
            java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
            return linker.defaultLookup().find("clock_gettime").map(f -> linker.downcallHandle(f,
                    java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT,
                            java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.ADDRESS))).orElse(null);
        } catch (RuntimeException | LinkageError e) {
            return null; // native access not enabled, or no such symbol: the bean's ticks
        }
    }

    /** @return CPU time of the calling thread so far, ns, or -1 where the JVM cannot tell */
    static long threadNanos() {
        return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : -1;
    }

    /**
     * @param cpuNanos CPU time spent, ns; negative where unknown
     * @param bytes bytes moved
     * @return CPU seconds per 1e9 bytes; NaN where the CPU time is unknown or no bytes moved
     */
    static double secondsPerGigabyte(long cpuNanos, long bytes) {
        if (cpuNanos < 0 || bytes <= 0) {
            return Double.NaN;
        }
        return cpuNanos / 1e9 / (bytes / 1e9);
    }
}
