package dev.gdsloader.cufile;

import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.JavaCppPointers;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.cufile.CUfileError_t;
import org.bytedeco.cuda.global.cufile;
import org.bytedeco.javacpp.Pointer;

/**
 * A device buffer registered with cuFile ({@code cuFileBufRegister}): cuFile pins and maps it once
 * instead of on every read, which is what lets reads into a slot DMA directly.
 *
 * <p>Counted by a {@link NativeAllocator} as {@link MemoryKind#CUFILE_REGISTERED} (no budget: the bytes are
 * already charged as device memory) from registration to {@link #close()}.
 *
 * <p>Does not own the device buffer: close this registration before freeing the buffer.
 * {@link #close()} deregisters once.
 */
public final class CuFileBufferRegistration implements AutoCloseable {
    private final Pointer base;
    private final long bytes;
    private final CuFileDriver driver;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final NativeAllocator.Allocation allocation;

    private CuFileBufferRegistration(Pointer base, long bytes, CuFileDriver driver, NativeAllocator.Allocation allocation) {
        this.base = base;
        this.bytes = bytes;
        this.driver = driver;
        this.allocation = allocation;
    }

    /**
     * Registers the whole of {@code buffer}, counted by the process root allocator.
     *
     * @param buffer a device buffer that outlives the registration
     * @return the registration, owned by the caller
     * @throws CuFileException if the driver is unavailable or registration fails
     */
    public static CuFileBufferRegistration register(DeviceBuffer buffer) throws CuFileException {
        return register(buffer, NativeAllocator.root());
    }

    /**
     * Registers the whole of {@code buffer}, counted by {@code allocator} until {@link #close()}.
     *
     * @param buffer a device buffer that outlives the registration
     * @param allocator the allocator that counts it
     * @return the registration, owned by the caller
     * @throws CuFileException if the driver is unavailable or registration fails
     */
    public static CuFileBufferRegistration register(DeviceBuffer buffer, NativeAllocator allocator) throws CuFileException {
        CuFileDriver driver = CuFileDriver.get();
        Pointer base = JavaCppPointers.at(buffer.address());
        NativeAllocator.Allocation a = allocator.reserve(MemoryKind.CUFILE_REGISTERED, buffer.size(),
                "cuFile registration of " + buffer.size() + " bytes of GPU memory");
        CUfileError_t st = cufile.cuFileBufRegister(base, buffer.size(), 0);
        if (st.err() != 0) {
            a.release();
            throw new CuFileException("cuFileBufRegister(" + buffer.size() + " bytes of GPU memory) failed: "
                    + CuFileErrors.describe(st.err()), st.err());
        }
        driver.retain();
        return new CuFileBufferRegistration(base, buffer.size(), driver, a);
    }

    /** @return registered size in bytes */
    public long bytes() {
        return bytes;
    }

    /** Deregisters once. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                cufile.cuFileBufDeregister(base);
                driver.release();
            } finally {
                allocation.release();
            }
        }
    }
}
