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
     * Enqueues a host-to-device copy; returns before the copy is done. The pinned source must stay untouched
     * until the copy completes (record an event after it).
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
        copy(dst, dstOffset, src, srcOffset, bytes, cudaMemcpyKind.cudaMemcpyHostToDevice);
    }

    /**
     * Enqueues a copy from host memory given by address (memory registered with {@link HostRegistration}, e.g. a
     * mapped file) to device memory, through the driver's {@code cuMemcpyHtoDAsync_v2}: the copy engine reads the
     * registered pages directly, no staging.
     *
     * @param dst device buffer
     * @param dstOffset byte offset in {@code dst}
     * @param hostAddress first source byte, in registered (page-locked) host memory that stays registered until the
     *     copy is done
     * @param bytes number of bytes, &ge; 0 (0 enqueues nothing)
     * @throws IndexOutOfBoundsException if the destination range falls outside {@code dst}
     * @throws CudaException on a CUDA error, or where {@code libcuda.so.1} lacks the copy function
     */
    public void copyFromHostAddress(DeviceBuffer dst, long dstOffset, long hostAddress, long bytes) {
        checkOpen();
        checkRange(dstOffset, bytes, dst.size(), dst.kindName());
        if (bytes == 0) {
            return;
        }
        if (!DriverCopies.available()) {
            throw new CudaException("copy from registered host memory needs cuMemcpyHtoDAsync_v2 from libcuda.so.1", null);
        }
        int rc = DriverCopies.hostToDevice(dst.address() + dstOffset, hostAddress, bytes, stream.address());
        if (rc != 0) {
            throw new CudaException("cuMemcpyHtoDAsync_v2(registered host memory to " + dst.kindName() + ", " + bytes + " bytes)",
                    rc, jcuda.driver.CUresult.stringFor(rc));
        }
    }

    /**
     * Enqueues a device-to-host copy.
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
        copy(dst, dstOffset, src, srcOffset, bytes, cudaMemcpyKind.cudaMemcpyDeviceToHost);
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
        copy(dst, dstOffset, src, srcOffset, bytes, cudaMemcpyKind.cudaMemcpyDeviceToDevice);
    }

    /**
     * Enqueues a copy between device buffers that may be on different devices ({@code cudaMemcpyPeerAsync}): over the
     * link where the destination's device has peer access to the source's ({@link CudaPeers#enable}) and the reverse,
     * else the driver stages it through host memory. Within one device it is a device-to-device copy.
     *
     * @param dst destination buffer (on {@link DeviceBuffer#device()})
     * @param dstOffset byte offset in {@code dst}
     * @param src source buffer
     * @param srcOffset byte offset in {@code src}
     * @param bytes number of bytes, &ge; 0 (0 enqueues nothing)
     * @throws IndexOutOfBoundsException if a range falls outside its buffer
     * @throws CudaException on a CUDA error
     */
    public void copyPeer(DeviceBuffer dst, long dstOffset, DeviceBuffer src, long srcOffset, long bytes) {
        checkOpen();
        checkRange(dstOffset, bytes, dst.size(), dst.kindName());
        checkRange(srcOffset, bytes, src.size(), src.kindName());
        if (bytes == 0) {
            return;
        }
        int rc = JCuda.cudaMemcpyPeerAsync(dst.pointer(dstOffset), dst.device(), src.pointer(srcOffset), src.device(), bytes, stream);
        if (rc != jcuda.runtime.cudaError.cudaSuccess) {
            Cuda.check(rc, "cudaMemcpyPeerAsync(GPU " + src.device() + " to GPU " + dst.device() + ", " + bytes + " bytes)");
        }
    }

    /**
     * Enqueues setting {@code bytes} bytes of {@code dst} from {@code offset} to {@code value} ({@code cudaMemsetAsync}),
     * ordered with the stream's other work (unlike {@link DeviceBuffer#fill}, which runs on the legacy default stream
     * that this non-blocking stream does not wait for).
     *
     * @param dst device buffer
     * @param offset byte offset in {@code dst}
     * @param bytes number of bytes, &ge; 0
     * @param value byte value, low 8 bits used
     * @throws IndexOutOfBoundsException if the range falls outside {@code dst}
     * @throws CudaException on a CUDA error
     */
    public void fill(DeviceBuffer dst, long offset, long bytes, int value) {
        checkOpen();
        checkRange(offset, bytes, dst.size(), dst.kindName());
        if (bytes == 0) {
            return;
        }
        Cuda.check(JCuda.cudaMemsetAsync(dst.pointer(offset), value, bytes, stream),
                "cudaMemsetAsync(" + bytes + " bytes of " + dst.kindName() + " memory)");
    }

    /**
     * The one copy routine: bounds checks, then the driver API with raw addresses for host-device copies
     * where it is available (no allocation), else {@code cudaMemcpyAsync} through JCuda; the message is
     * built only on failure.
     */
    private void copy(CopyEndpoint dst, long dstOffset, CopyEndpoint src, long srcOffset, long bytes, int kind) {
        checkOpen();
        checkRange(dstOffset, bytes, dst.size(), dst.kindName());
        checkRange(srcOffset, bytes, src.size(), src.kindName());
        if (bytes == 0) {
            return;
        }
        int rc;
        if (kind != cudaMemcpyKind.cudaMemcpyDeviceToDevice && DriverCopies.available()) {
            long d = dst.address() + dstOffset;
            long sa = src.address() + srcOffset;
            rc = kind == cudaMemcpyKind.cudaMemcpyHostToDevice ? DriverCopies.hostToDevice(d, sa, bytes, stream.address())
                    : DriverCopies.deviceToHost(d, sa, bytes, stream.address());
            if (rc != 0) {
                throw new CudaException("cuMemcpyAsync(" + src.kindName() + " to " + dst.kindName() + ", " + bytes + " bytes)",
                        rc, jcuda.driver.CUresult.stringFor(rc));
            }
            return;
        }
        rc = JCuda.cudaMemcpyAsync(dst.pointer(dstOffset), src.pointer(srcOffset), bytes, kind, stream);
        if (rc != jcuda.runtime.cudaError.cudaSuccess) {
            Cuda.check(rc, "cudaMemcpyAsync(" + src.kindName() + " to " + dst.kindName() + ", " + bytes + " bytes)");
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

    /** What a copy reads from or writes to: device memory or pinned host memory. */
    interface CopyEndpoint {
        /** @return the address of byte 0 */
        long address();

        /** @return size in bytes */
        long size();

        /** @return a JCuda pointer to byte {@code offset} */
        jcuda.Pointer pointer(long offset);

        /** @return "device" or "pinned", for messages */
        String kindName();
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
