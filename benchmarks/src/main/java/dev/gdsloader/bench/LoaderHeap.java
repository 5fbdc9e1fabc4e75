package dev.gdsloader.bench;

import java.lang.management.ManagementFactory;

/**
 * Heap bytes the loader allocates over a stretch of batches, for the benchmarks' "heap B/batch": every thread's
 * allocation ({@code com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes}, which keeps what ended threads
 * allocated, such as an epoch's reader thread) less that of the threads alive at the start that are not the loader's
 * (names not starting with {@code gdsloader-}, other than the consumer: a progress bar, the JVM's own) and less what
 * the caller says its consumer thread spent on its own work ({@link #end(long)}). What is left is the loader's threads
 * (reader, I/O pool) and the consumer's calls into the loader ({@code hasNext}, {@code next}, releasing the batch).
 * A non-loader thread started during the stretch is counted too (an upper bound). One stretch per instance; the
 * instance is made and ended on the consumer thread; not thread-safe.
 */
final class LoaderHeap {
    private static final String LOADER_THREADS = "gdsloader-";
    private static final com.sun.management.ThreadMXBean MX = bean();

    private final long[] others;
    private final long[] othersStart;
    private final long totalStart;

    private LoaderHeap(long[] others) {
        this.others = others;
        this.othersStart = MX.getThreadAllocatedBytes(others);
        this.totalStart = MX.getTotalThreadAllocatedBytes(); // last: the lists above are the consumer's own allocation
    }

    private static com.sun.management.ThreadMXBean bean() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean mx
                && mx.isThreadAllocatedMemorySupported()) {
            try {
                mx.setThreadAllocatedMemoryEnabled(true);
                return mx;
            } catch (UnsupportedOperationException | SecurityException e) {
                return null;
            }
        }
        return null;
    }

    /** @return whether this JVM counts heap allocation per thread (else {@link #start()} gives null) */
    static boolean supported() {
        return MX != null;
    }

    /**
     * Starts a stretch on the calling (consumer) thread.
     *
     * @return the stretch, or null where this JVM does not count heap allocation per thread
     */
    static LoaderHeap start() {
        if (MX == null) {
            return null;
        }
        long self = Thread.currentThread().threadId();
        java.lang.management.ThreadInfo[] infos = MX.getThreadInfo(MX.getAllThreadIds());
        return new LoaderHeap(java.util.Arrays.stream(infos).filter(i -> i != null && i.getThreadId() != self
                && !i.getThreadName().startsWith(LOADER_THREADS)).mapToLong(java.lang.management.ThreadInfo::getThreadId)
                .toArray());
    }

    /**
     * @return heap bytes the consumer thread has allocated so far (to measure its own work and pass it to
     *     {@link #end(long)}), or 0 where this JVM does not count
     */
    static long consumerBytes() {
        return MX == null ? 0 : MX.getCurrentThreadAllocatedBytes();
    }

    /**
     * Ends the stretch, on the thread that started it.
     *
     * @param consumerOwnBytes heap bytes the consumer thread allocated in the stretch for its own work (checking the
     *     batches), taken out
     * @return the loader's heap bytes over the stretch, at least 0
     */
    long end(long consumerOwnBytes) {
        long total = MX.getTotalThreadAllocatedBytes() - totalStart; // first: what follows allocates on this thread
        long[] othersEnd = MX.getThreadAllocatedBytes(others);
        long other = 0;
        for (int i = 0; i < others.length; i++) {
            if (othersEnd[i] >= 0 && othersStart[i] >= 0) { // -1: the thread ended (or never counted); its bytes stay in
                other += othersEnd[i] - othersStart[i];
            }
        }
        return Math.max(0, total - other - consumerOwnBytes);
    }
}
