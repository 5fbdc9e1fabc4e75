package dev.gdsloader.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time for the benchmarks' "CPU seconds per GB moved": the whole process's CPU time
 * ({@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime}: every thread, the JIT and the GC included),
 * and the calling thread's, to take the benchmark's own checking out of it. Stateless and thread-safe.
 */
final class CpuTime {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CpuTime() {
    }

    /** @return CPU time of this process so far, ns (all threads), or -1 where the platform's bean cannot tell */
    static long processNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
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
