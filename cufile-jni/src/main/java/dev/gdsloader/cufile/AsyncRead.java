package dev.gdsloader.cufile;

import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.JavaCppPointers;
import dev.gdsloader.cuda.NativeResource;
import org.bytedeco.cuda.cufile.CUfileError_t;
import org.bytedeco.cuda.global.cufile;
import org.bytedeco.javacpp.SizeTPointer;

/**
 * One {@code cuFileReadAsync} at a time on a registered stream ({@link CuFileStream}), reusable for read
 * after read: it owns the read's host parameter block ({@code size}, {@code file_offset},
 * {@code bufPtr_offset}, {@code bytes_read}, which cuFile reads and writes when the stream executes the read)
 * and a CUDA event recorded right after the read, which says when the stream has passed it.
 *
 * <p>Source: NVIDIA cuFile API reference, "cuFileReadAsync" (cuFile 1.7 / CUDA 12.2 and later): the call
 * only enqueues; once the stream has executed the read, {@code bytes_read} holds the bytes read or a
 * negative error ({@code -1} for an I/O error with {@code errno}, {@code -CUfileOpError} otherwise).
 *
 * <p>Use: {@link #start} enqueues and returns at once; {@link #await()} blocks until the stream has passed
 * the read and returns the count or throws; {@link #isDone()} polls; {@link #bytesRead()} is the raw value
 * once done. The device memory must not be read before the read is done (wait for it on the host, or make
 * another stream wait on the same stream). Sizes and offsets are in bytes.
 *
 * <p>Ownership: the parameter block and the event are this object's, freed once by {@link #close()}, which
 * first waits for a read still in flight so that cuFile never writes freed memory. Not thread-safe: one
 * thread starts and awaits; {@code close()} must not race with {@code start}.
 */
public final class AsyncRead extends NativeResource {
    private final CuFileStream stream;
    private final AsyncReadParams params = new AsyncReadParams();
    private final CudaEvent done;
    private final SizeTPointer sizeP;
    private final SizeTPointer fileOffsetP;
    private final SizeTPointer bufOffsetP;
    private final SizeTPointer bytesReadP;
    private CuFileHandle file;
    private boolean started;
    private boolean inFlight;

    private AsyncRead(CuFileStream stream) {
        this.stream = stream;
        CudaEvent e = null;
        try {
            e = CudaEvent.create();
            this.sizeP = view(AsyncReadParams.SIZE);
            this.fileOffsetP = view(AsyncReadParams.FILE_OFFSET);
            this.bufOffsetP = view(AsyncReadParams.BUF_OFFSET);
            this.bytesReadP = view(AsyncReadParams.BYTES_READ);
        } catch (RuntimeException | Error t) {
            params.close();
            if (e != null) {
                e.close();
            }
            throw t;
        }
        this.done = e;
        trackLeaks();
    }

    private SizeTPointer view(int word) {
        return new SizeTPointer(JavaCppPointers.at(params.address(word)));
    }

    /**
     * Makes a reusable read on {@code stream}.
     *
     * @param stream a registered stream that outlives this object
     * @return the read, owned by the caller
     * @throws IllegalStateException if the registration is closed
     * @throws CudaException if the event cannot be created
     */
    public static AsyncRead on(CuFileStream stream) {
        stream.checkOpen();
        return new AsyncRead(stream);
    }

    /**
     * Enqueues a read of {@code bytes} bytes at {@code fileOffset} of {@code file} into {@code dst} at
     * {@code dstOffset} ({@code cuFileReadAsync} with {@code dst}'s base address, so a buffer registered with
     * {@link CuFileBufferRegistration} is recognised); returns before the read runs.
     *
     * @param file registered file that stays open until the read is done
     * @param dst device buffer that stays allocated until the read is done
     * @param dstOffset byte offset in {@code dst}, &ge; 0
     * @param bytes bytes to read, &gt; 0, fitting {@code dst} from {@code dstOffset}
     * @param fileOffset byte offset in the file, &ge; 0
     * @throws IllegalArgumentException if {@code bytes <= 0} or {@code fileOffset < 0}
     * @throws IndexOutOfBoundsException if the range falls outside {@code dst}
     * @throws IllegalStateException if the previous read is still in flight, or anything is closed
     * @throws CuFileException if cuFile refuses to enqueue, naming file, offset, length and the decoded error
     */
    public void start(CuFileHandle file, DeviceBuffer dst, long dstOffset, long bytes, long fileOffset) throws CuFileException {
        checkOpen();
        stream.checkOpen();
        if (bytes <= 0 || fileOffset < 0) {
            throw new IllegalArgumentException(file.path() + ": an async read needs bytes > 0 and file offset >= 0, got "
                    + bytes + " bytes at " + fileOffset);
        }
        file.checkRange(dst, dstOffset, bytes);
        if (inFlight && !done.isComplete()) {
            throw new IllegalStateException(file.path() + ": the previous async read is still in flight; await() it first");
        }
        params.set(bytes, fileOffset, dstOffset);
        this.file = file;
        this.started = true;
        CUfileError_t st = cufile.cuFileReadAsync(file.nativeHandle(), JavaCppPointers.at(dst.address()), sizeP,
                fileOffsetP, bufOffsetP, bytesReadP, stream.nativeStream());
        int err = st.err();
        st.close();
        if (err != 0) {
            inFlight = false;
            throw new CuFileException(file.path() + ": cuFileReadAsync of " + bytes + " bytes at offset " + fileOffset
                    + " failed to enqueue: " + CuFileErrors.describe(err), err);
        }
        inFlight = true;
        try {
            done.record(stream.stream());
        } catch (RuntimeException e) {
            // without the event nothing says when the read is done: wait for the whole stream
            stream.stream().synchronize();
            inFlight = false;
            throw e;
        }
    }

    /**
     * @return true once the stream has passed the last read (or none was started); never blocks
     * @throws CudaException if the stream's work failed
     */
    public boolean isDone() {
        checkOpen();
        if (inFlight && done.isComplete()) {
            inFlight = false;
        }
        return !inFlight;
    }

    /**
     * Waits until the stream has passed the last read and returns what it read.
     *
     * @return bytes read: the requested count, or fewer at end of file
     * @throws IllegalStateException if no read was started
     * @throws CuFileException if the read failed ({@code bytes_read} negative: named through
     *     {@link CuFileErrors#describeIoReturn}) or cuFile never wrote {@code bytes_read}
     * @throws CudaException if the stream's work failed
     */
    public long await() throws CuFileException {
        checkOpen();
        if (inFlight) {
            done.synchronize();
            inFlight = false;
        }
        long n = bytesRead();
        if (n == AsyncReadParams.NOT_WRITTEN) {
            throw new CuFileException(file.path() + ": cuFileReadAsync of " + params.get(AsyncReadParams.SIZE)
                    + " bytes at offset " + params.get(AsyncReadParams.FILE_OFFSET)
                    + " completed on the stream without writing bytes_read", -1);
        }
        if (n < 0) {
            throw new CuFileException(file.path() + ": cuFileReadAsync of " + params.get(AsyncReadParams.SIZE)
                    + " bytes at offset " + params.get(AsyncReadParams.FILE_OFFSET) + " failed: "
                    + CuFileErrors.describeIoReturn(n), n);
        }
        return n;
    }

    /**
     * The raw {@code bytes_read} of the last read: a count &ge; 0, a negative error, or
     * {@link Long#MIN_VALUE} if cuFile has not written it.
     *
     * @return the value cuFile wrote
     * @throws IllegalStateException if no read was started or the last one is still in flight
     */
    public long bytesRead() {
        checkOpen();
        if (!started) {
            throw new IllegalStateException("no cuFileReadAsync was started on this AsyncRead");
        }
        if (!isDone()) {
            throw new IllegalStateException(file.path() + ": the async read is still in flight; await() it first");
        }
        return params.get(AsyncReadParams.BYTES_READ);
    }

    /** Waits for a read still in flight, then frees the parameter block and the event. */
    @Override
    protected void free() {
        try {
            if (inFlight) {
                done.synchronize();
            }
        } catch (CudaException e) {
            // the stream failed: it will not execute the read any more, so freeing is still safe
        } finally {
            params.close();
            done.close();
        }
    }

    @Override
    protected String describe() {
        return "cuFileReadAsync parameter block and event";
    }
}
