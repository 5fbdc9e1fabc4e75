package dev.gdsloader.cuda;

import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import jcuda.Pointer;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaError;

/**
 * Pinned (page-locked) host memory from {@code cudaHostAlloc}, freed once by {@link #close()}.
 *
 * <p>Pinned memory is what the GPU's copy engines read directly: host-to-device copies from it run at
 * link speed and can be asynchronous, whereas pageable memory goes through a hidden staging copy. The
 * allocation is page aligned (4 KiB), so it is also a valid {@code O_DIRECT} target.
 *
 * <p>Its {@link #segment()} (and every slice of it) is scoped by a shared {@link Arena} closed in {@link #close()}:
 * touching a segment after close throws {@link IllegalStateException} instead of reading freed memory. Charged
 * to a {@link NativeAllocator} as {@link MemoryKind#PINNED} from allocation to close.
 *
 * <p>Owned by whoever allocated it. Not synchronised: order accesses with streams and events.
 */
public final class PinnedBuffer extends NativeResource implements CudaStream.CopyEndpoint {
    private final NativeAddress.AddressPointer pointer;
    private final long size;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private final NativeAllocator.Allocation allocation;

    @SuppressWarnings("restricted") // reinterpret: the segment spans exactly the cudaHostAlloc'ed size bytes
    private PinnedBuffer(NativeAddress.AddressPointer pointer, long size, NativeAllocator.Allocation allocation) {
        this.pointer = pointer;
        this.size = size;
        this.segment = MemorySegment.ofAddress(pointer.address()).reinterpret(size, arena, null);
        this.allocation = allocation;
        trackLeaks(allocation.site());
    }

    /**
     * Allocates {@code bytes} of pinned host memory, portable across devices, charged to the process root allocator.
     *
     * @param bytes size in bytes, &gt; 0
     * @return the buffer, owned by the caller
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws dev.gdsloader.memory.MemoryBudgetException if the root's host budget would be exceeded
     * @throws PinnedAllocationException if the host cannot page-lock that much memory (the message names host
     *     memory, not GPU memory)
     * @throws CudaException if CUDA is unavailable
     */
    public static PinnedBuffer allocate(long bytes) {
        return allocate(bytes, NativeAllocator.root());
    }

    /**
     * Allocates {@code bytes} of pinned host memory, portable across devices, charged to {@code allocator} (and
     * its ancestors) until {@link #close()}.
     *
     * @param bytes size in bytes, &gt; 0
     * @param allocator the allocator it is charged to
     * @return the buffer, owned by the caller
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws dev.gdsloader.memory.MemoryBudgetException if a host budget would be exceeded (nothing allocated)
     * @throws PinnedAllocationException if the host cannot page-lock that much memory (the message names host
     *     memory, not GPU memory)
     * @throws CudaException if CUDA is unavailable
     */
    public static PinnedBuffer allocate(long bytes, NativeAllocator allocator) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned buffer size must be > 0 bytes, got " + bytes);
        }
        Cuda.ensure();
        NativeAllocator.Allocation a = allocator.reserve(MemoryKind.PINNED, bytes, "pinned host buffer of " + bytes + " bytes");
        try {
            NativeAddress.AddressPointer p = new NativeAddress.AddressPointer();
            int rc = JCuda.cudaHostAlloc(p, bytes, JCuda.cudaHostAllocPortable);
            if (rc != cudaError.cudaSuccess) {
                throw new PinnedAllocationException(bytes, rc, Cuda.errorName(rc));
            }
            return new PinnedBuffer(p, bytes, a);
        } catch (RuntimeException | Error e) {
            a.release();
            throw e;
        }
    }

    /** @return the host address of the first byte */
    @Override
    public long address() {
        checkOpen();
        return segment.address();
    }

    /**
     * The address kernels read this buffer at ({@code cudaHostGetDevicePointer}): pinned memory is mapped into the
     * device's address space, so a kernel can read it over the link without a copy. With unified addressing (64-bit
     * Linux) it equals {@link #address()}.
     *
     * @return the device-side address of the first byte
     * @throws IllegalStateException if closed
     * @throws CudaException if the device cannot map host memory
     */
    public long devicePointer() {
        checkOpen();
        NativeAddress.AddressPointer d = new NativeAddress.AddressPointer();
        Cuda.check(JCuda.cudaHostGetDevicePointer(d, pointer, 0), "cudaHostGetDevicePointer(" + describe() + ")");
        return d.address();
    }

    /** @return size in bytes */
    @Override
    public long size() {
        return size;
    }

    /**
     * @return a memory segment over the whole buffer, scoped to this buffer: after {@link #close()} any access
     *     to it or to a slice of it throws {@link IllegalStateException}
     */
    public MemorySegment segment() {
        checkOpen();
        return segment;
    }

    /**
     * @param offset byte offset into this buffer
     * @return a JCuda pointer to {@code address() + offset}
     * @throws IndexOutOfBoundsException if offset is outside {@code [0, size]}
     */
    @Override
    public Pointer pointer(long offset) {
        checkOpen();
        if (offset < 0 || offset > size) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside pinned buffer of " + size + " bytes");
        }
        return pointer.withByteOffset(offset);
    }

    /** @return "pinned" */
    @Override
    public String kindName() {
        return "pinned";
    }

    @Override
    protected void free() {
        arena.close(); // first: from here on every segment over the buffer refuses access
        try {
            Cuda.check(JCuda.cudaFreeHost(pointer), "cudaFreeHost(" + describe() + ")");
        } finally {
            allocation.release();
        }
    }

    @Override
    protected String describe() {
        return "pinned host buffer of " + size + " bytes";
    }
}
