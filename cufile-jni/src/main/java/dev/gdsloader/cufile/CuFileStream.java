package dev.gdsloader.cufile;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.JavaCppPointers;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.cufile.CUfileError_t;
import org.bytedeco.cuda.global.cufile;

/**
 * A CUDA stream registered with cuFile ({@code cuFileStreamRegister}) so that {@link AsyncRead}s can enqueue
 * {@code cuFileReadAsync} on it: the read runs when the stream reaches it, in order with the stream's other
 * work (copies, kernels, events), without a host thread blocking in it.
 *
 * <p>Source: NVIDIA cuFile API reference, "cuFileStreamRegister", "cuFileStreamDeregister" and
 * "cuFileReadAsync" (stream-based APIs, cuFile 1.7 / CUDA 12.2 and later). Before any of these is called,
 * {@link #register} checks through {@link CuFileLibrary} that the installed libcufile exports them, since
 * calling a missing one through the bytedeco binding kills the JVM; a library without them is reported
 * as a {@link CuFileException}.
 *
 * <p>Does not own the CUDA stream: close this registration before destroying the stream. {@link #close()}
 * waits for the stream's queued work, then deregisters, once. Thread-safe: many {@link AsyncRead}s may
 * enqueue on one registration from different threads (they are then ordered by the stream in the order
 * their enqueue calls ran); {@code close()} must not race with them.
 */
public final class CuFileStream implements AutoCloseable {
    /** Stream flag: every read's device-buffer offset is fixed when it is enqueued ({@code CU_FILE_STREAM_FIXED_BUF_OFFSET}). */
    public static final int FIXED_BUF_OFFSET = cufile.CU_FILE_STREAM_FIXED_BUF_OFFSET;
    /** Stream flag: every read's file offset is fixed when it is enqueued ({@code CU_FILE_STREAM_FIXED_FILE_OFFSET}). */
    public static final int FIXED_FILE_OFFSET = cufile.CU_FILE_STREAM_FIXED_FILE_OFFSET;
    /** Stream flag: every read's size is fixed when it is enqueued ({@code CU_FILE_STREAM_FIXED_FILE_SIZE}). */
    public static final int FIXED_FILE_SIZE = cufile.CU_FILE_STREAM_FIXED_FILE_SIZE;
    /** Stream flag: every size and offset is a multiple of 4 KiB ({@code CU_FILE_STREAM_PAGE_ALIGNED_INPUTS}). */
    public static final int PAGE_ALIGNED_INPUTS = cufile.CU_FILE_STREAM_PAGE_ALIGNED_INPUTS;
    /**
     * The three "fixed" flags: {@link AsyncRead} never changes a parameter block while its read is in
     * flight, so the values cuFile sees at enqueue are the values it reads at execution.
     */
    public static final int FIXED_AT_ENQUEUE = FIXED_BUF_OFFSET | FIXED_FILE_OFFSET | FIXED_FILE_SIZE;
    private static final int ALL_FLAGS = FIXED_AT_ENQUEUE | PAGE_ALIGNED_INPUTS;

    /** The libcufile exports the stream API needs; checked before the first call. */
    static final List<String> SYMBOLS = List.of("cuFileStreamRegister", "cuFileStreamDeregister", "cuFileReadAsync");

    private final CudaStream stream;
    private final CUstream_st cuStream;
    private final int flags;
    private final CuFileDriver driver;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CuFileStream(CudaStream stream, CUstream_st nativeStream, int flags, CuFileDriver driver) {
        this.stream = stream;
        this.cuStream = nativeStream;
        this.flags = flags;
        this.driver = driver;
    }

    /**
     * Says whether this process can use the stream API, without calling it.
     *
     * @param exports whether the installed libcufile exports a symbol ({@link CuFileLibrary#exports})
     * @return empty if every needed symbol is exported, else one line naming the first missing one
     */
    static Optional<String> missingSymbol(Predicate<String> exports) {
        for (String s : SYMBOLS) {
            if (!exports.test(s)) {
                return Optional.of(CuFileLibrary.SONAME + " does not export " + s
                        + ": cuFileReadAsync needs cuFile 1.7 (CUDA 12.2) or later");
            }
        }
        return Optional.empty();
    }

    /**
     * Says why {@link #register} would fail for want of the library or its stream API, without calling
     * cuFile.
     *
     * @return empty when libcufile is present and exports the stream API, else the reason in one line
     */
    public static Optional<String> unavailableReason() {
        CuFileLibrary lib = CuFileLibrary.get();
        if (!lib.isPresent()) {
            return lib.failure();
        }
        return missingSymbol(lib::exports);
    }

    /**
     * Registers {@code stream} with cuFile.
     *
     * @param stream a CUDA stream that outlives the registration
     * @param flags 0 or a combination of {@link #FIXED_BUF_OFFSET}, {@link #FIXED_FILE_OFFSET},
     *     {@link #FIXED_FILE_SIZE} and {@link #PAGE_ALIGNED_INPUTS}: hints that let cuFile read the
     *     parameters at enqueue; {@code PAGE_ALIGNED_INPUTS} promises that every read is 4 KiB aligned
     * @return the registration, owned by the caller
     * @throws IllegalArgumentException if {@code flags} has other bits
     * @throws CuFileException if cuFile is unavailable, the library lacks the stream API (nothing is
     *     called then), or {@code cuFileStreamRegister} fails
     */
    public static CuFileStream register(CudaStream stream, int flags) throws CuFileException {
        if ((flags & ~ALL_FLAGS) != 0) {
            throw new IllegalArgumentException("cuFile stream flags must be a combination of 1, 2, 4 and 8, got " + flags);
        }
        CuFileDriver driver = CuFileDriver.get();
        Optional<String> missing = missingSymbol(CuFileLibrary.get()::exports);
        if (missing.isPresent()) {
            throw new CuFileException(missing.get(), cufile.CU_FILE_ASYNC_NOT_SUPPORTED);
        }
        CUstream_st s = JavaCppPointers.stream(stream);
        CUfileError_t st = cufile.cuFileStreamRegister(s, flags);
        int err = st.err();
        st.close();
        if (err != 0) {
            throw new CuFileException("cuFileStreamRegister(flags " + flags + ") failed: " + CuFileErrors.describe(err), err);
        }
        driver.retain();
        return new CuFileStream(stream, s, flags, driver);
    }

    /** @return the registered CUDA stream (not owned by this registration) */
    public CudaStream stream() {
        return stream;
    }

    /** @return the flags it was registered with */
    public int flags() {
        return flags;
    }

    /** @return the stream as the bytedeco binding takes it */
    CUstream_st nativeStream() {
        checkOpen();
        return cuStream;
    }

    /** @throws IllegalStateException if this registration was closed */
    void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("cuFile stream registration is closed");
        }
    }

    /**
     * Waits for the stream's queued work (so no read still uses the registration), then deregisters
     * ({@code cuFileStreamDeregister}), once.
     *
     * @throws dev.gdsloader.cuda.CudaException if the queued work failed (the registration is still
     *     released)
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                stream.synchronize();
            } finally {
                CUfileError_t st = cufile.cuFileStreamDeregister(cuStream);
                st.close();
                driver.release();
            }
        }
    }
}
