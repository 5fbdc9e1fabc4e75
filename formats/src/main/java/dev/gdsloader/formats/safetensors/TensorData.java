package dev.gdsloader.formats.safetensors;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.Shapes;
import java.util.Arrays;
import java.util.Objects;

/**
 * A tensor to write with {@link SafetensorsWriter}: element type, shape and data.
 *
 * <p>Immutable as far as this class goes: the shape is copied on the way in and out. The data
 * array is <em>not</em> copied (it may be large): the record keeps a reference to the caller's
 * array, and the caller must not modify it until the tensor has been written. Thread-safe if the
 * data array is not modified.
 *
 * @param dtype element type
 * @param shape per-axis element counts, entries {@code >= 0}; {@code []} for a scalar
 * @param littleEndianBytes exactly {@code product(shape) * dtype.itemSize()} bytes: the elements
 *     in C (row-major) order, each little-endian
 */
@SuppressWarnings("ArrayRecordComponent") // arrays copied in and out, equals/hashCode by content
public record TensorData(DType dtype, long[] shape, byte[] littleEndianBytes) {

    /**
     * Validates the sizes and copies the shape.
     *
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if a shape entry is negative, the byte size overflows a
     *     long, or {@code littleEndianBytes.length} differs from the byte size of the shape (both
     *     numbers are named)
     */
    public TensorData {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(littleEndianBytes, "littleEndianBytes");
        shape = shape.clone();
        long expected = Shapes.byteSize(shape, dtype.itemSize());
        if (littleEndianBytes.length != expected) {
            throw new IllegalArgumentException(dtype.safetensorsName() + " shape "
                    + Shapes.toPythonTuple(shape) + " needs " + Shapes.toProduct(shape,
                            dtype.itemSize()) + " = " + expected + " bytes, got "
                    + littleEndianBytes.length);
        }
    }

    /**
     * Returns the shape.
     *
     * @return a fresh copy of the per-axis element counts
     */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /**
     * Compares by content (type, shape and data bytes).
     *
     * @param o the other object
     * @return true if {@code o} is a {@code TensorData} with equal type, shape and bytes
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof TensorData t && dtype == t.dtype && Arrays.equals(shape, t.shape)
                && Arrays.equals(littleEndianBytes, t.littleEndianBytes);
    }

    /**
     * Hashes by content.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        return Objects.hash(dtype, Arrays.hashCode(shape), Arrays.hashCode(littleEndianBytes));
    }

    /**
     * Describes the tensor without its data.
     *
     * @return e.g. {@code "TensorData[F32 (2, 2), 16 bytes]"}
     */
    @Override
    public String toString() {
        return "TensorData[" + dtype.safetensorsName() + " " + Shapes.toPythonTuple(shape) + ", "
                + littleEndianBytes.length + " bytes]";
    }
}
