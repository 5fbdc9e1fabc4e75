package dev.gdsloader.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The process's limit on open file descriptors ({@code getrlimit(RLIMIT_NOFILE)}, {@code sys/resource.h}), which
 * bounds how many shard files a loader may keep open. The JVM raises the soft limit to the hard one at start on Linux
 * ({@code -XX:+MaxFDLimit}, the default). Stateless and thread-safe.
 */
public final class OpenFileLimit {
    /** What {@link #soft()} answers where {@code getrlimit} fails: the usual default soft limit. */
    public static final long FALLBACK = 1024;

    private OpenFileLimit() {
    }

    /**
     * @return the soft limit on open descriptors now ({@code rlim_cur}); {@link Long#MAX_VALUE} for
     *     {@code RLIM_INFINITY}, {@value #FALLBACK} if it cannot be read
     */
    public static long soft() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rlimit = arena.allocate(16, 8);
            int rc = (int) Libc.GETRLIMIT.invokeExact(Libc.newCallState(arena), Libc.RLIMIT_NOFILE, rlimit);
            if (rc != 0) {
                return FALLBACK;
            }
            long cur = rlimit.get(ValueLayout.JAVA_LONG, 0);
            return cur < 0 ? Long.MAX_VALUE : cur; // RLIM_INFINITY is ~0UL
        } catch (Throwable t) {
            return FALLBACK;
        }
    }
}
