package dev.gdsloader.loader;

import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.formats.DType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Optional;

/**
 * One column of a batch: a C-order tensor of shape {@code [records, ...recordShape]} and element type
 * {@code dtype}, {@code bytes} long, in device memory ({@link #devicePointer()}) or, on the host path,
 * in host memory ({@link #hostSegment()}).
 *
 * <p>Valid until its batch is released; the memory belongs to the loader's slot. The device pointer is
 * aligned to at least the dtype's item size.
 */
public final class ColumnView {
    private final String name;
    private final DType dtype;
    private final long[] shape;
    private final long bytes;
    private final DeviceBuffer device;
    private final long offset;
    private final MemorySegment host;

    ColumnView(String name, DType dtype, long[] shape, long bytes, DeviceBuffer device, long offset, MemorySegment host) {
        this.name = name;
        this.dtype = dtype;
        this.shape = shape;
        this.bytes = bytes;
        this.device = device;
        this.offset = offset;
        this.host = host;
    }

    /** @return the column name */
    public String name() {
        return name;
    }

    /** @return element type */
    public DType dtype() {
        return dtype;
    }

    /** @return shape, batch dimension first (a copy) */
    public long[] shape() {
        return shape.clone();
    }

    /** @return size in bytes ({@code prod(shape) x dtype.itemSize()}) */
    public long bytes() {
        return bytes;
    }

    /** @return true if the data is in device memory */
    public boolean onDevice() {
        return device != null;
    }

    /**
     * @return the device pointer of the first byte
     * @throws IllegalStateException on the host path
     */
    public long devicePointer() {
        if (device == null) {
            throw new IllegalStateException("column '" + name + "' is in host memory (host path): use hostSegment()");
        }
        return device.address() + offset;
    }

    /**
     * @return the slot's device buffer and {@link #deviceOffset()} within it, for typed copies
     *     ({@code CudaStream.copyToHost}); empty on the host path
     */
    public Optional<DeviceBuffer> deviceBuffer() {
        return Optional.ofNullable(device);
    }

    /** @return byte offset of this view inside {@link #deviceBuffer()} */
    public long deviceOffset() {
        return offset;
    }

    /**
     * @return the data as a host memory segment of {@link #bytes()} bytes
     * @throws IllegalStateException on a device path
     */
    public MemorySegment hostSegment() {
        if (host == null) {
            throw new IllegalStateException("column '" + name + "' is in device memory: use devicePointer()");
        }
        return host;
    }

    @Override
    public String toString() {
        return name + ": " + dtype + Arrays.toString(shape) + ", " + bytes + " bytes" + (onDevice() ? " on GPU" : " on host");
    }
}
