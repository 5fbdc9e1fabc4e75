package dev.gdsloader.cuda;

import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import jcuda.Pointer;
import jcuda.runtime.JCuda;

/**
 * Device (GPU) memory from {@code cudaMalloc} on the current device, freed once by {@link #close()}.
 *
 * <p>Charged to a {@link NativeAllocator} as {@link MemoryKind#DEVICE} from allocation to {@link #close()}.
 * Owned by whoever allocated it. Thread-safe for reading its address; the memory contents are not
 * synchronised: order accesses with streams and events.
 */
public final class DeviceBuffer extends NativeResource implements CudaStream.CopyEndpoint {
    private final NativeAddress.AddressPointer pointer;
    private final long address;
    private final long size;
    private final int device;
    private final NativeAllocator.Allocation allocation;

    private DeviceBuffer(NativeAddress.AddressPointer pointer, long size, int device, NativeAllocator.Allocation allocation) {
        this.pointer = pointer;
        this.address = pointer.address();
        this.size = size;
        this.device = device;
        this.allocation = allocation;
        trackLeaks(allocation.site());
    }

    /**
     * Allocates {@code bytes} of device memory on the current device, charged to the process root allocator.
     *
     * @param bytes size in bytes, &gt; 0
     * @return the buffer, owned by the caller
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws dev.gdsloader.memory.MemoryBudgetException if the root's device budget would be exceeded
     * @throws CudaException if CUDA is unavailable or the device is out of memory
     */
    public static DeviceBuffer allocate(long bytes) {
        return allocate(bytes, NativeAllocator.root());
    }

    /**
     * Allocates {@code bytes} of device memory on the current device, charged to {@code allocator} (and its
     * ancestors) until {@link #close()}.
     *
     * @param bytes size in bytes, &gt; 0
     * @param allocator the allocator it is charged to
     * @return the buffer, owned by the caller
     * @throws IllegalArgumentException if {@code bytes <= 0}
     * @throws dev.gdsloader.memory.MemoryBudgetException if a device budget would be exceeded (nothing allocated)
     * @throws CudaException if CUDA is unavailable or the device is out of memory
     */
    public static DeviceBuffer allocate(long bytes, NativeAllocator allocator) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("device buffer size must be > 0 bytes, got " + bytes);
        }
        Cuda.ensure();
        NativeAllocator.Allocation a = allocator.reserve(MemoryKind.DEVICE, bytes, "device buffer of " + bytes + " bytes");
        try {
            NativeAddress.AddressPointer p = new NativeAddress.AddressPointer();
            Cuda.check(JCuda.cudaMalloc(p, bytes), "cudaMalloc(" + bytes + " bytes of GPU memory)");
            int[] dev = {0};
            JCuda.cudaGetDevice(dev);
            return new DeviceBuffer(p, bytes, dev[0], a);
        } catch (RuntimeException | Error e) {
            a.release();
            throw e;
        }
    }

    /** @return the device pointer (address in the device's unified address space) */
    @Override
    public long address() {
        checkOpen();
        return address;
    }

    /** @return size in bytes */
    @Override
    public long size() {
        return size;
    }

    /** @return the ordinal of the device that holds the memory */
    public int device() {
        return device;
    }

    /**
     * @param offset byte offset into this buffer
     * @return a JCuda pointer to {@code address() + offset}, for JCuda calls
     * @throws IndexOutOfBoundsException if offset is outside {@code [0, size]}
     */
    @Override
    public Pointer pointer(long offset) {
        checkOpen();
        if (offset < 0 || offset > size) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside device buffer of " + size + " bytes");
        }
        return pointer.withByteOffset(offset);
    }

    /**
     * Fills the whole buffer with a byte value, synchronously ({@code cudaMemset}).
     *
     * @param value byte value, low 8 bits used
     * @throws CudaException on a CUDA error
     */
    public void fill(int value) {
        checkOpen();
        Cuda.check(JCuda.cudaMemset(pointer, value, size), "cudaMemset(" + size + " bytes)");
    }

    /** @return "device" */
    @Override
    public String kindName() {
        return "device";
    }

    @Override
    protected void free() {
        try {
            Cuda.check(JCuda.cudaFree(pointer), "cudaFree(" + describe() + ")");
        } finally {
            allocation.release();
        }
    }

    @Override
    protected String describe() {
        return "device buffer of " + size + " bytes on GPU " + device;
    }
}
