package dev.gdsloader.loader;

import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.formats.DType;
import dev.gdsloader.memory.IllegalReferenceCountException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Optional;

/**
 * One column of a batch: a C-order tensor of shape {@code [records, ...recordShape]} and element type
 * {@code dtype}, {@code bytes} long, in device memory ({@link #devicePointer()}) or, on the host path,
 * in host memory ({@link #hostSegment()}).
 *
 * <p>Belongs to one batch: every accessor first checks that its batch is still held (one volatile read) and
 * throws {@link IllegalReferenceCountException} naming the batch once it was released, instead of reading
 * whatever batch the slot holds next. The memory belongs to the loader's slot: a pointer or segment taken from
 * the view is valid until the batch is released (the segment of the host path stays readable after that, until
 * the loader closes, but then holds a later batch's bytes). The device pointer is aligned to at least the dtype's
 * item size. For the batch's thread.
 */
public final class ColumnView {
    private final Batch batch;
    final SlotColumn column;

    ColumnView(Batch batch, SlotColumn column) {
        this.batch = batch;
        this.column = column;
    }

    /**
     * @return the column name
     * @throws IllegalReferenceCountException if the batch was released (as every accessor here)
     */
    public String name() {
        batch.ensureAccessible();
        return column.name;
    }

    /** @return element type */
    public DType dtype() {
        batch.ensureAccessible();
        return column.dtype;
    }

    /** @return shape, batch dimension first (a new array) */
    public long[] shape() {
        batch.ensureAccessible();
        long[] shape = new long[column.recordShape.length + 1];
        shape[0] = column.records;
        System.arraycopy(column.recordShape, 0, shape, 1, column.recordShape.length);
        return shape;
    }

    /** @return size in bytes ({@code prod(shape) x dtype.itemSize()}) */
    public long bytes() {
        batch.ensureAccessible();
        return column.bytes;
    }

    /** @return true if the data is in device memory */
    public boolean onDevice() {
        batch.ensureAccessible();
        return column.device != null;
    }

    /**
     * @return the device pointer of the first byte
     * @throws IllegalStateException on the host path
     */
    public long devicePointer() {
        batch.ensureAccessible();
        if (column.device == null) {
            throw new IllegalStateException("column '" + column.name + "' is in host memory (host path): use hostSegment()");
        }
        return column.device.address() + column.offset;
    }

    /**
     * @return the slot's device buffer and {@link #deviceOffset()} within it, for typed copies
     *     ({@code CudaStream.copyToHost}); empty on the host path
     */
    public Optional<DeviceBuffer> deviceBuffer() {
        batch.ensureAccessible();
        return Optional.ofNullable(column.device);
    }

    /** @return byte offset of this view inside {@link #deviceBuffer()} */
    public long deviceOffset() {
        batch.ensureAccessible();
        return column.offset;
    }

    /**
     * @return the data as a host memory segment of {@link #bytes()} bytes. A segment kept past the loader's
     *     {@code close()} throws the JDK's {@code IllegalStateException("Already closed")} when read: take it from the
     *     batch where it is read, so a closed loader is named (below)
     * @throws IllegalStateException on a device path, or if the loader was closed with the batch held (naming the
     *     batch: its memory was freed with the loader)
     */
    public MemorySegment hostSegment() {
        batch.ensureAccessible();
        if (column.host == null) {
            throw new IllegalStateException("column '" + column.name + "' is in device memory: use devicePointer()");
        }
        if (!column.host.scope().isAlive()) {
            throw new IllegalStateException("column '" + column.name + "' of " + batch.describe() + " is no longer readable: "
                    + "its loader was closed while the batch was held, and its memory was freed with it");
        }
        return column.host;
    }

    /** @return e.g. "images: UINT8[256, 28, 28], 200704 bytes on GPU"; for a released batch, says so instead */
    @Override
    public String toString() {
        if (batch.refCount() == 0) {
            return "column '" + column.name + "' of " + batch.describe() + " (released)";
        }
        return column.name + ": " + column.dtype + Arrays.toString(shape()) + ", " + column.bytes + " bytes"
                + (column.device != null ? " on GPU" : " on host");
    }
}
