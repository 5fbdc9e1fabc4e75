package dev.gdsloader.cuda;

import dev.gdsloader.memory.LeakDetector;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Base of every native resource in this package: one owner, freed exactly once.
 *
 * <p>{@link #close()} is idempotent and thread-safe: the first call frees, later calls do nothing.
 * Using a resource after close throws {@link IllegalStateException} naming it.
 */
public abstract class NativeResource implements AutoCloseable {
    private final AtomicBoolean closed = new AtomicBoolean();
    private LeakDetector.Tracker leak;

    /** Creates the owner of a native resource that subclasses have just acquired. */
    protected NativeResource() {
    }

    /** Frees the native resource; called exactly once by {@link #close()}. */
    protected abstract void free();

    /** @return a short description for error messages, e.g. "device buffer of 4096 bytes" */
    protected abstract String describe();

    /**
     * Starts leak tracking ({@link LeakDetector}); subclasses call it last in their constructor, once
     * {@link #describe()} can answer.
     */
    protected final void trackLeaks() {
        leak = LeakDetector.track(this, describe());
    }

    /**
     * Starts leak tracking at a site the caller's sampling already chose (a
     * {@link dev.gdsloader.memory.NativeAllocator.Allocation#site()}); null: not sampled, nothing is tracked.
     *
     * @param site where the resource was allocated, or null
     */
    protected final void trackLeaks(Throwable site) {
        leak = site == null ? LeakDetector.none() : LeakDetector.trackSampled(this, describe(), site);
    }

    /** @return true once {@link #close()} has been called */
    public final boolean isClosed() {
        return closed.get();
    }

    /**
     * @throws IllegalStateException if this resource was closed
     */
    protected final void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(describe() + " is already closed");
        }
    }

    /**
     * Frees the resource the first time it is called.
     *
     * @throws CudaException if the native free call reports an error (the resource counts as closed)
     */
    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            if (leak != null) {
                leak.release();
            }
            free();
        }
    }
}
