package dev.gdsloader.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Page-aligned native host memory (not pinned) owned by one shared {@link Arena}: the landing zone of the
 * host path and of the raw {@code O_DIRECT} ceiling measurement. Freed once by {@link #close()}.
 *
 * <p>Thread-safe to read and write from many threads (shared arena); the owner closes it after all
 * users are done.
 */
public final class AlignedMemory implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param bytes size in bytes, &gt; 0; the address is aligned to {@link PosixFile#DIRECT_ALIGNMENT}
     * @throws IllegalArgumentException if bytes &le; 0
     * @throws OutOfMemoryError if the host has no memory for it
     */
    public AlignedMemory(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("aligned memory size must be > 0 bytes, got " + bytes);
        }
        this.segment = arena.allocate(bytes, PosixFile.DIRECT_ALIGNMENT);
    }

    /** @return the whole segment; invalid after {@link #close()} */
    public MemorySegment segment() {
        return segment;
    }

    /** Frees the memory the first time it is called; later calls do nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
