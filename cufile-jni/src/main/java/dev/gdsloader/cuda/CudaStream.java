package dev.gdsloader.cuda;

import jcuda.runtime.JCuda;
import jcuda.runtime.cudaMemcpyKind;

/**
 * A non-blocking CUDA stream ({@code cudaStreamNonBlocking}) with the copies the loader issues on it.
 * Host-device copies go through the driver API with raw addresses where it is available ({@link DriverCopies}:
 * no Java allocation per copy), else through JCuda.
 * Destroyed once by {@link #close()}.
 *
 * <p>Owned by its creator. Calls may come from any thread; work on one stream runs in issue order.
 * All sizes and offsets are in bytes and are bounds-checked against the buffers before CUDA sees them.
 */
public final class CudaStream extends NativeResource {
    final NativeAddress.AddressStream stream = new NativeAddress.AddressStream();

    private CudaStream() {
        Cuda.check(JCuda.cudaStreamCreateWithFlags(stream, JCuda.cudaStreamNonBlocking),
                "cudaStreamCreateWithFlags(cudaStreamNonBlocking)");
        trackLeaks();
    }

    /**
     * Creates a stream on the current device.
     *
     * @return the stream, owned by the caller
     * @throws CudaException if CUDA is unavailable
     */
    public static CudaStream create() {
        Cuda.ensure();
        return new CudaStream();
    }

    /**
     * Enqueues a host-to-device copy ({@code cudaMemcpyAsync}); returns before the copy is done.
     * The pinned source must stay untouched until the copy completes (record an event after it).
     *
     * @param dst device buffer
     * @param dstOffset byte offset in {@code dst}
     * @param src pinned host buffer
     * @param srcOffset byte offset in {@code src}
     * @param bytes number of bytes, &ge; 0 (0 enqueues nothing)
     * @throws IndexOutOfBoundsException if a range falls outside its buffer
     * @throws CudaException on a CUDA error
     */
    public void copyToDevice(DeviceBuffer dst, long dstOffset, PinnedBuffer src, long srcOffset, long bytes) {
        checkRange(dstOffset, bytes, dst.size(), "device");
        checkRange(srcOffset, bytes, src.size(), "pinned");
        if (DriverCopies.available() && bytes > 0) {
            checkOpen();
            int rc = DriverCopies.hostToDevice(dst.address() + dstOffset, src.address() + srcOffset, bytes, stream.address());
            if (rc != 0) {
                throw new CudaException("cuMemcpyHtoDAsync(" + bytes + " bytes)", rc, jcuda.driver.CUresult.stringFor(rc));
            }
            return;
        }
        copy(dst::pointer, dstOffset, src::pointer, srcOffset, bytes, cudaMemcpyKind.cudaMemcpyHostToDevice, "host to device");
    }

    /**
     * Enqueues a device-to-host copy ({@code cudaMemcpyAsync}).
     *
     * @param dst pinned host buffer
     * @param dstOffset byte offset in {@code dst}
     * @param src device buffer
     * @param srcOffset byte offset in {@code src}
     * @param bytes number of bytes, &ge; 0
     * @throws IndexOutOfBoundsException if a range falls outside its buffer
     * @throws CudaException on a CUDA error
     */
    public void copyToHost(PinnedBuffer dst, long dstOffset, DeviceBuffer src, long srcOffset, long bytes) {
        checkRange(dstOffset, bytes, dst.size(), "pinned");
        checkRange(srcOffset, bytes, src.size(), "device");
        if (DriverCopies.available() && bytes > 0) {
            checkOpen();
            int rc = DriverCopies.deviceToHost(dst.address() + dstOffset, src.address() + srcOffset, bytes, stream.address());
            if (rc != 0) {
                throw new CudaException("cuMemcpyDtoHAsync(" + bytes + " bytes)", rc, jcuda.driver.CUresult.stringFor(rc));
            }
            return;
        }
        copy(dst::pointer, dstOffset, src::pointer, srcOffset, bytes, cudaMemcpyKind.cudaMemcpyDeviceToHost, "device to host");
    }

    /**
     * Enqueues a device-to-device copy within or between device buffers.
     *
     * @param dst destination buffer
     * @param dstOffset byte offset in {@code dst}
     * @param src source buffer
     * @param srcOffset byte offset in {@code src}
     * @param bytes number of bytes, &ge; 0
     * @throws IndexOutOfBoundsException if a range falls outside its buffer
     * @throws CudaException on a CUDA error
     */
    public void copyDeviceToDevice(DeviceBuffer dst, long dstOffset, DeviceBuffer src, long srcOffset, long bytes) {
        checkRange(dstOffset, bytes, dst.size(), "device");
        checkRange(srcOffset, bytes, src.size(), "device");
        copy(dst::pointer, dstOffset, src::pointer, srcOffset, bytes, cudaMemcpyKind.cudaMemcpyDeviceToDevice, "device to device");
    }

    private void copy(java.util.function.LongFunction<jcuda.Pointer> dst, long dstOffset,
                      java.util.function.LongFunction<jcuda.Pointer> src, long srcOffset, long bytes, int kind, String what) {
        checkOpen();
        if (bytes == 0) {
            return;
        }
        int rc = JCuda.cudaMemcpyAsync(dst.apply(dstOffset), src.apply(srcOffset), bytes, kind, stream);
        if (rc != jcuda.runtime.cudaError.cudaSuccess) { // message built only on failure: this is the hot path
            Cuda.check(rc, "cudaMemcpyAsync(" + what + ", " + bytes + " bytes)");
        }
    }

    /**
     * Makes later work on this stream wait for {@code event} ({@code cudaStreamWaitEvent}); the host does
     * not block.
     *
     * @param event a recorded event
     * @throws CudaException on a CUDA error
     */
    public void waitFor(CudaEvent event) {
        checkOpen();
        Cuda.check(JCuda.cudaStreamWaitEvent(stream, event.event, 0), "cudaStreamWaitEvent");
    }

    /**
     * Blocks until all work on this stream is done ({@code cudaStreamSynchronize}).
     *
     * @throws CudaException if queued work failed
     */
    public void synchronize() {
        checkOpen();
        Cuda.check(JCuda.cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }

    /** @return the raw {@code cudaStream_t} value, to pass to other native libraries */
    public long address() {
        checkOpen();
        return stream.address();
    }

    private static void checkRange(long offset, long bytes, long size, String what) {
        if (offset < 0 || bytes < 0 || offset > size - bytes) {
            throw new IndexOutOfBoundsException("copy of " + bytes + " bytes at offset " + offset
                    + " outside " + what + " buffer of " + size + " bytes");
        }
    }

    @Override
    protected void free() {
        Cuda.check(JCuda.cudaStreamDestroy(stream), "cudaStreamDestroy");
    }

    @Override
    protected String describe() {
        return "CUDA stream";
    }
}
