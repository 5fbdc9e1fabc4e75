package dev.gdsloader.cuda;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Reports native resources and batches that were garbage-collected without being closed or released,
 * naming where each was allocated, in the spirit of Netty's {@code ResourceLeakDetector}.
 *
 * <p>Off by default (no cost). Enabled with the system property {@code -Dgdsloader.leakDetection=true}:
 * every tracked object then records its allocation stack, and a {@link Cleaner} logs a warning for each one
 * collected while still open. Thread-safe.
 */
public final class LeakDetector {
    /** The system property that turns leak detection on. */
    public static final String PROPERTY = "gdsloader.leakDetection";

    private static final Logger LOG = Logger.getLogger(LeakDetector.class.getName());
    private static final boolean ENABLED = Boolean.getBoolean(PROPERTY);
    private static final Cleaner CLEANER = ENABLED ? Cleaner.create() : null;
    private static final AtomicLong LEAKS = new AtomicLong();
    private static final Tracker NONE = new Tracker(null, null);

    private LeakDetector() {
    }

    /** @return true when {@value #PROPERTY} is set */
    public static boolean enabled() {
        return ENABLED;
    }

    /** @return how many leaks were reported in this process */
    public static long leaksReported() {
        return LEAKS.get();
    }

    /** @return a tracker that tracks nothing, for callers that skip building a description when disabled */
    public static Tracker none() {
        return NONE;
    }

    /**
     * Starts tracking {@code owner}.
     *
     * @param owner the object whose collection while open is a leak; not referenced by the tracker
     * @param description what it is, e.g. "device buffer of 4096 bytes on GPU 0"
     * @return the tracker: call {@link Tracker#release()} when the owner is closed
     */
    public static Tracker track(Object owner, String description) {
        if (!ENABLED) {
            return NONE;
        }
        Tracker t = new Tracker(description, new Throwable("allocated here"));
        CLEANER.register(owner, t::collected);
        return t;
    }

    /** The tracking state of one object; holds no reference to it. */
    public static final class Tracker {
        private final String description;
        private final Throwable site;
        private final AtomicBoolean released = new AtomicBoolean();

        private Tracker(String description, Throwable site) {
            this.description = description;
            this.site = site;
        }

        /** Marks the object released: it is not a leak when collected. */
        public void release() {
            released.set(true);
        }

        private void collected() {
            if (!released.get()) {
                StringBuilder sb = new StringBuilder("LEAK: " + description + " was garbage-collected without being closed");
                for (StackTraceElement e : site.getStackTrace()) {
                    sb.append("\n\tat ").append(e);
                }
                LOG.warning(sb.toString());
                // counted after the report is written, so whoever waits for the count also sees the line
                LEAKS.incrementAndGet();
            }
        }
    }
}
