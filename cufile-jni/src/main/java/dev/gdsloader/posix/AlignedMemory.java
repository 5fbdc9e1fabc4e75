package dev.gdsloader.posix;

import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Page-aligned native host memory (not pinned) owned by one shared {@link Arena}: the landing zone of the
 * host path and of the raw {@code O_DIRECT} ceiling measurement. Freed once by {@link #close()}, after which any
 * access to its segment or a slice of it throws {@link IllegalStateException} (the arena's scope). Charged to a
 * {@link NativeAllocator} as {@link MemoryKind#HOST} from construction to close.
 *
 * <p>Thread-safe to read and write from many threads (shared arena); the owner closes it after all
 * users are done.
 */
public final class AlignedMemory implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final NativeAllocator.Allocation allocation;

    /**
     * Allocates memory charged to the process root allocator.
     *
     * @param bytes size in bytes, &gt; 0; the address is aligned to {@link PosixFile#DIRECT_ALIGNMENT}
     * @throws IllegalArgumentException if bytes &le; 0
     * @throws dev.gdsloader.memory.MemoryBudgetException if the root's host budget would be exceeded
     * @throws OutOfMemoryError if the host has no memory for it
     */
    public AlignedMemory(long bytes) {
        this(bytes, PosixFile.DIRECT_ALIGNMENT);
    }

    /**
     * Allocates memory charged to the process root allocator.
     *
     * @param bytes size in bytes, &gt; 0
     * @param alignment address alignment in bytes, a power of two &ge; 4096
     * @throws IllegalArgumentException if bytes &le; 0 or the alignment is not a power of two &ge; 4096
     * @throws dev.gdsloader.memory.MemoryBudgetException if the root's host budget would be exceeded
     * @throws OutOfMemoryError if the host has no memory for it
     */
    public AlignedMemory(long bytes, long alignment) {
        this(bytes, alignment, NativeAllocator.root());
    }

    /**
     * @param bytes size in bytes, &gt; 0
     * @param alignment address alignment in bytes, a power of two &ge; 4096 (2 MiB lets the kernel hand
     *     {@code O_DIRECT} larger physically contiguous runs where huge pages are available)
     * @param allocator the allocator it is charged to (and its ancestors) until {@link #close()}
     * @throws IllegalArgumentException if bytes &le; 0 or the alignment is not a power of two &ge; 4096
     * @throws dev.gdsloader.memory.MemoryBudgetException if a host budget would be exceeded (nothing allocated)
     * @throws OutOfMemoryError if the host has no memory for it
     */
    public AlignedMemory(long bytes, long alignment, NativeAllocator allocator) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("aligned memory size must be > 0 bytes, got " + bytes);
        }
        if (alignment < PosixFile.DIRECT_ALIGNMENT || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two >= 4096, got " + alignment);
        }
        this.allocation = allocator.reserve(MemoryKind.HOST, bytes, "aligned host memory of " + bytes + " bytes");
        try {
            this.segment = arena.allocate(bytes, alignment);
        } catch (RuntimeException | Error e) {
            arena.close();
            allocation.release();
            throw e;
        }
    }

    /** @return the whole segment; any access to it or a slice of it throws {@link IllegalStateException} after {@link #close()} */
    public MemorySegment segment() {
        return segment;
    }

    /** Frees the memory the first time it is called; later calls do nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                arena.close();
            } finally {
                allocation.release();
            }
        }
    }
}
