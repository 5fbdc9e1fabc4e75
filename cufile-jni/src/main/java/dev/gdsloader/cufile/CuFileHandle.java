package dev.gdsloader.cufile;

import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.JavaCppPointers;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.cufile.CUfileDescr_t;
import org.bytedeco.cuda.cufile.CUfileError_t;
import org.bytedeco.cuda.cufile.CUfileHandle_t;
import org.bytedeco.cuda.global.cufile;

/**
 * A file registered with cuFile ({@code cuFileHandleRegister}) for reads straight into GPU memory.
 *
 * <p>The file is opened read-only, with {@code O_DIRECT} where the filesystem allows it, else buffered (tmpfs
 * refuses {@code O_DIRECT} with {@code EINVAL}; cuFile then works in compatibility mode). The handle owns
 * its file descriptor: {@link #close()} deregisters, then closes the descriptor, once.
 *
 * <p>{@link #read} may be called from many threads at once (cuFile I/O on one handle
 * is thread-safe); {@code close()} must not race with them.
 */
public final class CuFileHandle implements AutoCloseable {
    private final PosixFile file;
    private final CUfileHandle_t handle;
    private final CuFileDriver driver;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CuFileHandle(PosixFile file, CUfileHandle_t handle, CuFileDriver driver) {
        this.file = file;
        this.handle = handle;
        this.driver = driver;
    }

    /**
     * Opens {@code path} read-only and registers it.
     *
     * @param path the file
     * @return the registered handle, owned by the caller
     * @throws CuFileException if the driver is unavailable or registration fails; for
     *     {@code CU_FILE_HANDLE_NOT_REGISTERED (5027)} the message explains the udev cause
     * @throws IOException if the file cannot be opened
     */
    public static CuFileHandle register(Path path) throws IOException {
        return register(PosixFile.openForRead(path, true));
    }

    /**
     * Registers a file already open (e.g. beneath a server's root: {@link dev.gdsloader.posix.DirectoryRoot}).
     *
     * @param file the file, open read-only (with {@code O_DIRECT} where its filesystem takes it); the handle owns
     *     it from now on, and it is closed here if registration fails
     * @return the registered handle, owned by the caller
     * @throws CuFileException if the driver is unavailable or registration fails, as {@link #register(Path)}
     */
    public static CuFileHandle register(PosixFile file) throws IOException {
        Path path = file.path();
        CuFileDriver driver;
        try {
            driver = CuFileDriver.get();
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
        CUfileDescr_t descr = new CUfileDescr_t();
        try {
            descr.type(cufile.CU_FILE_HANDLE_TYPE_OPAQUE_FD);
            descr.handle_fd(file.fd());
            CUfileHandle_t handle = new CUfileHandle_t();
            CUfileError_t st = cufile.cuFileHandleRegister(handle, descr);
            if (st.err() != 0) {
                file.close();
                throw new CuFileException(path + ": cuFileHandleRegister failed: " + CuFileErrors.describe(st.err())
                        + (st.err() == CuFileErrors.HANDLE_NOT_REGISTERED ? "; " + UdevRecords.explain(path) : ""), st.err());
            }
            driver.retain();
            return new CuFileHandle(file, handle, driver);
        } finally {
            descr.close();
        }
    }

    /** @return the registered file's path */
    public Path path() {
        return file.path();
    }

    /** @return true when the underlying descriptor was opened with {@code O_DIRECT} */
    public boolean isDirect() {
        return file.isDirect();
    }

    /**
     * Reads {@code bytes} bytes at {@code fileOffset} into {@code dst} at {@code dstOffset}
     * ({@code cuFileRead}, synchronous). Fast (DMA) when offset, length and device address are 4 KiB aligned.
     *
     * @param dst device buffer
     * @param dstOffset byte offset in {@code dst}
     * @param bytes number of bytes, &ge; 0
     * @param fileOffset byte offset in the file, &ge; 0
     * @return bytes read: {@code bytes}, or fewer at end of file
     * @throws IndexOutOfBoundsException if the range falls outside {@code dst}
     * @throws CuFileException naming the file, offset, length and decoded error
     */
    public long read(DeviceBuffer dst, long dstOffset, long bytes, long fileOffset) throws CuFileException {
        checkRange(dst, dstOffset, bytes);
        if (bytes == 0) {
            return 0;
        }
        long n = cufile.cuFileRead(handle, JavaCppPointers.at(dst.address()), bytes, fileOffset, dstOffset);
        if (n < 0) {
            throw new CuFileException(file.path() + ": cuFileRead of " + bytes + " bytes at offset " + fileOffset
                    + " failed: " + CuFileErrors.describeIoReturn(n), n);
        }
        return n;
    }

    /**
     * @throws IllegalStateException if this handle is closed
     * @throws IndexOutOfBoundsException if {@code bytes} at {@code offset} fall outside {@code buf}
     */
    void checkRange(DeviceBuffer buf, long offset, long bytes) {
        if (closed.get()) {
            throw new IllegalStateException(file.path() + ": cuFile handle is closed");
        }
        if (offset < 0 || bytes < 0 || offset > buf.size() - bytes) {
            throw new IndexOutOfBoundsException(file.path() + ": " + bytes + " bytes at device offset " + offset
                    + " do not fit a device buffer of " + buf.size() + " bytes");
        }
    }

    /** Deregisters the handle and closes the file, once. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            cufile.cuFileHandleDeregister(handle);
            handle.close();
            file.close();
            driver.release();
        }
    }
}
