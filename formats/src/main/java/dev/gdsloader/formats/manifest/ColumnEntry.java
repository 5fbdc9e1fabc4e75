package dev.gdsloader.formats.manifest;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.Shapes;
import java.util.Arrays;
import java.util.Objects;

/**
 * A column of a {@link DatasetManifest}: the element type and record shape that every shard of
 * the column holds, e.g. {@code {"name": "images", "dtype": "U8", "record_shape": [28, 28]}}.
 *
 * <p>Immutable and thread-safe: the shape is copied on the way in and out.
 *
 * @param name the column name, not empty
 * @param dtype element type (written as its safetensors name, {@link DType#safetensorsName()})
 * @param recordShape per-axis element counts of one record, entries {@code >= 0}; {@code []}
 *     for scalar records
 */
@SuppressWarnings("ArrayRecordComponent") // recordShape copied in and out, equals/hashCode by content
public record ColumnEntry(String name, DType dtype, long[] recordShape) {

    /**
     * Validates and copies.
     *
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if the name is empty, a shape entry is negative or the
     *     record's byte size overflows a long
     */
    public ColumnEntry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("column name must not be empty");
        }
        recordShape = recordShape.clone();
        Shapes.byteSize(recordShape, dtype.itemSize());
    }

    /**
     * Returns the record shape.
     *
     * @return a fresh copy
     */
    @Override
    public long[] recordShape() {
        return recordShape.clone();
    }

    /**
     * Returns the size of one record.
     *
     * @return {@code product(recordShape) * dtype.itemSize()}, in bytes
     */
    public long recordBytes() {
        return Shapes.byteSize(recordShape, dtype.itemSize());
    }

    /**
     * Compares by content, the shape included.
     *
     * @param o the other object
     * @return true if equal
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof ColumnEntry c && name.equals(c.name) && dtype == c.dtype
                && Arrays.equals(recordShape, c.recordShape);
    }

    /**
     * Hashes by content.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(recordShape));
    }

    /**
     * Describes the column.
     *
     * @return e.g. {@code "ColumnEntry[images, U8 (28, 28)]"}
     */
    @Override
    public String toString() {
        return "ColumnEntry[" + name + ", " + dtype.safetensorsName() + " "
                + Shapes.toPythonTuple(recordShape) + "]";
    }
}
