package dev.gdsloader.cufile;

import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.JavaCppPointers;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.cufile.CUfileError_t;
import org.bytedeco.cuda.global.cufile;
import org.bytedeco.javacpp.Pointer;

/**
 * A device buffer registered with cuFile ({@code cuFileBufRegister}): cuFile pins and maps it once
 * instead of on every read, which is what lets reads into a slot DMA directly.
 *
 * <p>Does not own the device buffer: close this registration before freeing the buffer.
 * {@link #close()} deregisters once.
 */
public final class CuFileBufferRegistration implements AutoCloseable {
    private final Pointer base;
    private final long bytes;
    private final CuFileDriver driver;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CuFileBufferRegistration(Pointer base, long bytes, CuFileDriver driver) {
        this.base = base;
        this.bytes = bytes;
        this.driver = driver;
    }

    /**
     * Registers the whole of {@code buffer}.
     *
     * @param buffer a device buffer that outlives the registration
     * @return the registration, owned by the caller
     * @throws CuFileException if the driver is unavailable or registration fails
     */
    public static CuFileBufferRegistration register(DeviceBuffer buffer) throws CuFileException {
        CuFileDriver driver = CuFileDriver.get();
        Pointer base = JavaCppPointers.at(buffer.address());
        CUfileError_t st = cufile.cuFileBufRegister(base, buffer.size(), 0);
        if (st.err() != 0) {
            throw new CuFileException("cuFileBufRegister(" + buffer.size() + " bytes of GPU memory) failed: "
                    + CuFileErrors.describe(st.err()), st.err());
        }
        driver.retain();
        return new CuFileBufferRegistration(base, buffer.size(), driver);
    }

    /** @return registered size in bytes */
    public long bytes() {
        return bytes;
    }

    /** Deregisters once. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            cufile.cuFileBufDeregister(base);
            driver.release();
        }
    }
}
