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
 * <p>Valid until its batch is released; the memory belongs to the loader's slot, and the view object is
 * refilled for the next batch the slot holds. The device pointer is aligned to at least the dtype's item size.
 */
public final class ColumnView {
    private final String name;
    private final DType dtype;
    private final long[] shape;
    private final DeviceBuffer device;
    private final MemorySegment hostTarget;
    private long bytes;
    private long offset;
    private MemorySegment host;

    /**
     * A slot's view of one column, refilled by {@link #fill} for each batch the slot holds.
     *
     * @param name column name
     * @param dtype element type
     * @param recordShape shape of one record
     * @param device the slot's device memory, or null on the host path
     * @param hostTarget the slot's host memory, or null on device paths
     */
    ColumnView(String name, DType dtype, long[] recordShape, DeviceBuffer device, MemorySegment hostTarget) {
        this.name = name;
        this.dtype = dtype;
        this.shape = new long[recordShape.length + 1];
        System.arraycopy(recordShape, 0, shape, 1, recordShape.length);
        this.device = device;
        this.hostTarget = hostTarget;
    }

    void fill(int records, long viewBytes, long viewOffset) {
        shape[0] = records;
        bytes = viewBytes;
        offset = viewOffset;
        host = hostTarget == null ? null : hostTarget.asSlice(viewOffset, viewBytes);
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
