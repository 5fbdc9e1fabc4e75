package dev.gdsloader.formats.idx;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.Shapes;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * An array read from an IDX file, held in memory in little-endian C order.
 *
 * <p>Ownership: the data array is not copied (IDX files of MNIST size are tens of megabytes);
 * the record takes ownership of the array passed in and {@link #littleEndianData()} returns that
 * same array, which callers must treat as read-only. The shape is copied on the way in and out.
 * Thread-safe as long as nobody modifies the data array.
 *
 * @param source the file the array was read from
 * @param dtype element type
 * @param shape elements per axis, e.g. {@code [60000, 28, 28]} for MNIST training images
 * @param littleEndianData {@code product(shape) * dtype.itemSize()} bytes in C order, each
 *     element little-endian
 */
@SuppressWarnings("ArrayRecordComponent") // arrays copied in and out, equals/hashCode by content
public record IdxArray(Path source, DType dtype, long[] shape, byte[] littleEndianData) {

    /**
     * Validates the components and copies the shape.
     *
     * @throws NullPointerException if any component is null
     * @throws IllegalArgumentException if the data length is not the shape's byte size
     */
    public IdxArray {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
        Objects.requireNonNull(littleEndianData, "littleEndianData");
        long bytes = Shapes.byteSize(shape, dtype.itemSize());
        if (bytes != littleEndianData.length) {
            throw new IllegalArgumentException("shape " + Shapes.toPythonTuple(shape) + " of "
                    + dtype + " needs " + bytes + " bytes, got " + littleEndianData.length);
        }
    }

    /**
     * Returns the shape.
     *
     * @return a fresh copy of the shape, elements per axis
     */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /**
     * Returns the number of records, i.e. the length of axis 0.
     *
     * @return {@code shape[0]}, or 1 for a 0-d array
     */
    public long recordCount() {
        return shape.length == 0 ? 1 : shape[0];
    }

    /**
     * Returns the size of one record (one slice along axis 0).
     *
     * @return {@code product(shape[1..]) * dtype.itemSize()}, in bytes
     */
    public long recordBytes() {
        return Shapes.byteSize(Arrays.copyOfRange(shape, Math.min(1, shape.length), shape.length),
                dtype.itemSize());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdxArray a && source.equals(a.source) && dtype == a.dtype
                && Arrays.equals(shape, a.shape) && Arrays.equals(littleEndianData, a.littleEndianData);
    }

    @Override
    public int hashCode() {
        return Objects.hash(source, dtype, Arrays.hashCode(shape), Arrays.hashCode(littleEndianData));
    }

    @Override
    public String toString() {
        return "IdxArray[" + source + ", " + dtype + " " + Arrays.toString(shape) + ", "
                + littleEndianData.length + " bytes]";
    }
}
