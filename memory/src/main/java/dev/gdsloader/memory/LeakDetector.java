package dev.gdsloader.memory;

import java.lang.ref.Cleaner;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Reports native resources and batches that were garbage-collected without being closed or released,
 * naming where each was allocated, in the spirit of Netty's {@code ResourceLeakDetector}.
 *
 * <p>Levels ({@link Level}), from the system property {@value #LEVEL_PROPERTY} ({@code disabled}, {@code simple},
 * {@code paranoid}; case-insensitive): {@link Level#SIMPLE}, the default, tracks one object in
 * {@value #DEFAULT_SAMPLING_INTERVAL} (property {@value #SAMPLING_INTERVAL_PROPERTY}); {@link Level#PARANOID} tracks
 * every object; {@link Level#DISABLED} none. The older switch {@code -D}{@value #PROPERTY}{@code =true} means
 * {@link Level#PARANOID} ({@code false}: {@link Level#DISABLED}). A tracked object records its allocation stack
 * (a {@link Throwable}, a few microseconds); a {@link Cleaner} logs a warning ("LEAK: ...", with that stack) for
 * each one collected while still open. An untracked object costs one random draw. The same sampling decides which
 * {@link NativeAllocator} allocations record their site for the allocator's outstanding list. Thread-safe.
 */
public final class LeakDetector {
    /** Detection levels, as Netty names them. */
    public enum Level {
        /** Nothing is tracked. */
        DISABLED,
        /** One object in the sampling interval is tracked (the default). */
        SIMPLE,
        /** Every object is tracked: for tests and for hunting a leak. */
        PARANOID
    }

    /** The system property that sets the level: {@code disabled}, {@code simple} or {@code paranoid}. */
    public static final String LEVEL_PROPERTY = "gdsloader.leakDetection.level";
    /** The older boolean switch: {@code true} means {@link Level#PARANOID}, {@code false} {@link Level#DISABLED}. */
    public static final String PROPERTY = "gdsloader.leakDetection";
    /** The system property giving the sampling interval of {@link Level#SIMPLE}: track one object in N, N &ge; 1. */
    public static final String SAMPLING_INTERVAL_PROPERTY = "gdsloader.leakDetection.samplingInterval";
    /** One object in this many is tracked at {@link Level#SIMPLE} unless the property says otherwise. */
    public static final int DEFAULT_SAMPLING_INTERVAL = 128;

    private static final Logger LOG = Logger.getLogger(LeakDetector.class.getName());
    private static final int INTERVAL = intervalFrom(System.getProperty(SAMPLING_INTERVAL_PROPERTY));
    private static final AtomicLong LEAKS = new AtomicLong();
    private static final Tracker NONE = new Tracker(null, null);
    private static volatile Level level = levelFrom(System.getProperty(LEVEL_PROPERTY), System.getProperty(PROPERTY));

    private LeakDetector() {
    }

    /** The cleaner thread starts with the first tracked object. */
    private static final class CleanerHolder {
        static final Cleaner CLEANER = Cleaner.create();
    }

    /**
     * @param level value of {@value #LEVEL_PROPERTY}, or null
     * @param legacy value of {@value #PROPERTY}, or null
     * @return the level they give; {@link Level#SIMPLE} when neither is set
     * @throws IllegalArgumentException naming the property and the accepted values if a value is not one of them
     */
    static Level levelFrom(String level, String legacy) {
        if (level != null) {
            try {
                return Level.valueOf(level.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(LEVEL_PROPERTY + " must be disabled, simple or paranoid, got '" + level + "'");
            }
        }
        if (legacy != null) {
            return switch (legacy.trim().toLowerCase(Locale.ROOT)) {
                case "true" -> Level.PARANOID;
                case "false" -> Level.DISABLED;
                default -> throw new IllegalArgumentException(PROPERTY + " must be true or false, got '" + legacy + "'");
            };
        }
        return Level.SIMPLE;
    }

    private static int intervalFrom(String value) {
        if (value == null) {
            return DEFAULT_SAMPLING_INTERVAL;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(SAMPLING_INTERVAL_PROPERTY + " must be an integer >= 1, got '" + value + "'");
    }

    /** @return the level in force */
    public static Level level() {
        return level;
    }

    /**
     * Changes the level for objects allocated from now on (as Netty's {@code ResourceLeakDetector.setLevel});
     * objects already tracked stay tracked.
     *
     * @param newLevel the level
     */
    public static void setLevel(Level newLevel) {
        level = java.util.Objects.requireNonNull(newLevel, "level");
    }

    /** @return how many leaks were reported in this process */
    public static long leaksReported() {
        return LEAKS.get();
    }

    /** @return a tracker that tracks nothing, for objects the sampling passed over */
    public static Tracker none() {
        return NONE;
    }

    /**
     * Decides whether the next object is tracked: always at {@link Level#PARANOID}, one in the sampling interval
     * at {@link Level#SIMPLE}, never at {@link Level#DISABLED}. Callers that build a description only for tracked
     * objects ask this first, then call {@link #trackSampled}.
     *
     * @return true if the caller should track the object it is making
     */
    public static boolean sample() {
        Level l = level;
        return l == Level.PARANOID || (l == Level.SIMPLE && (INTERVAL == 1 || ThreadLocalRandom.current().nextInt(INTERVAL) == 0));
    }

    /**
     * @return a stack trace of the caller, "allocated here", when {@link #sample()} picks this allocation; else null
     */
    public static Throwable allocationSite() {
        return sample() ? new Throwable("allocated here") : null;
    }

    /**
     * Starts tracking {@code owner} if the sampling picks it.
     *
     * @param owner the object whose collection while open is a leak; not referenced by the tracker
     * @param description what it is, e.g. "device buffer of 4096 bytes on GPU 0"
     * @return the tracker: call {@link Tracker#release()} when the owner is closed
     */
    public static Tracker track(Object owner, String description) {
        return sample() ? trackSampled(owner, description, new Throwable("allocated here")) : NONE;
    }

    /**
     * Tracks {@code owner}, which the caller's own sampling ({@link #sample()}, {@link #allocationSite()}) picked.
     *
     * @param owner the object whose collection while open is a leak; not referenced by the tracker
     * @param description what it is
     * @param site where it was allocated; null: here
     * @return the tracker: call {@link Tracker#release()} when the owner is closed
     */
    public static Tracker trackSampled(Object owner, String description, Throwable site) {
        Tracker t = new Tracker(description, site != null ? site : new Throwable("allocated here"));
        CleanerHolder.CLEANER.register(owner, t::collected);
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
                LOG.warning("LEAK: " + description + " was garbage-collected without being closed\n"
                        + NativeAllocator.stack(site));
                LEAKS.incrementAndGet(); // counted once written: whoever sees the count can read the report
            }
        }
    }
}
