package dev.gdsloader.cuda;

import java.lang.foreign.MemorySegment;
import jcuda.Pointer;
import jcuda.runtime.JCuda;

/**
 * Pinned (page-locked) host memory from {@code cudaHostAlloc}, freed once by {@link #close()}.
 *
 * <p>Pinned memory is what the GPU's copy engines read directly: host-to-device copies from it run at
 * link speed and can be asynchronous, whereas pageable memory goes through a hidden staging copy. The
 * allocation is page aligned (4 KiB), so it is also a valid {@code O_DIRECT} target.
 *
 * <p>Owned by whoever allocated it. Not synchronised: order accesses with streams and events.
 */
public final class PinnedBuffer extends NativeResource implements CudaStream.CopyEndpoint {
    private final NativeAddress.AddressPointer pointer;
    private final long size;
    private final MemorySegment segment;

    @SuppressWarnings("restricted") // reinterpret: the segment spans exactly the cudaHostAlloc'ed size bytes
    private PinnedBuffer(NativeAddress.AddressPointer pointer, long size) {
        this.pointer = pointer;
        this.size = size;
        this.segment = MemorySegment.ofAddress(pointer.address()).reinterpret(size);
        trackLeaks();
    }

    /**
     * Allocates {@code bytes} of pinned host memory, portable across devices.
     *
     * @param bytes size in bytes, &gt; 0
     * @return the buffer, owned by the caller
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws CudaException if CUDA is unavailable or the host cannot page-lock that much memory
     *     (the message names host memory, not GPU memory)
     */
    public static PinnedBuffer allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned buffer size must be > 0 bytes, got " + bytes);
        }
        Cuda.ensure();
        NativeAddress.AddressPointer p = new NativeAddress.AddressPointer();
        Cuda.check(JCuda.cudaHostAlloc(p, bytes, JCuda.cudaHostAllocPortable),
                "cudaHostAlloc(" + bytes + " bytes of pinned host memory)");
        return new PinnedBuffer(p, bytes);
    }

    /** @return the host address of the first byte */
    public long address() {
        checkOpen();
        return segment.address();
    }

    /** @return size in bytes */
    public long size() {
        return size;
    }

    /**
     * @return a memory segment over the whole buffer; valid until {@link #close()}, after which any
     *     access to it is undefined (the caller must not keep it)
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
        Cuda.check(JCuda.cudaFreeHost(pointer), "cudaFreeHost(" + describe() + ")");
    }

    @Override
    protected String describe() {
        return "pinned host buffer of " + size + " bytes";
    }
}
