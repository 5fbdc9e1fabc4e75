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
        this(bytes, PosixFile.DIRECT_ALIGNMENT);
    }

    /**
     * @param bytes size in bytes, &gt; 0
     * @param alignment address alignment in bytes, a power of two &ge; 4096 (2 MiB lets the kernel hand
     *     {@code O_DIRECT} larger physically contiguous runs where huge pages are available)
     * @throws IllegalArgumentException if bytes &le; 0 or the alignment is not a power of two &ge; 4096
     * @throws OutOfMemoryError if the host has no memory for it
     */
    public AlignedMemory(long bytes, long alignment) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("aligned memory size must be > 0 bytes, got " + bytes);
        }
        if (alignment < PosixFile.DIRECT_ALIGNMENT || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two >= 4096, got " + alignment);
        }
        this.segment = arena.allocate(bytes, alignment);
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
