package dev.gdsloader.formats.safetensors;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * One tensor of a safetensors file, as described by its header entry: a C-order (row-major)
 * little-endian array of {@code dtype} with {@code shape}, stored in the {@code bytes} bytes at
 * absolute file offset {@code fileOffset}.
 *
 * <p>The file offset is {@link SafetensorsFile#dataStart()} plus the entry's first
 * {@code data_offsets} value; it need not be a multiple of the item size (the format does not
 * require alignment, although the reference writer keeps it).
 *
 * <p>Immutable and thread-safe: the shape is copied on the way in and on the way out.
 *
 * @param name the tensor's key in the header (any string except {@code "__metadata__"})
 * @param dtype element type
 * @param shape per-axis element counts, entries {@code >= 0}; {@code []} for a 0-d (scalar)
 *     tensor
 * @param fileOffset absolute byte offset of the first data byte from the start of the file,
 *     {@code >= 0}
 * @param bytes data size in bytes: {@code product(shape) * dtype.itemSize()}
 */
@SuppressWarnings("ArrayRecordComponent") // shape copied in and out, equals/hashCode by content
public record Tensor(String name, DType dtype, long[] shape, long fileOffset, long bytes) {

    /**
     * Validates and copies the components.
     *
     * @throws NullPointerException if {@code name}, {@code dtype} or {@code shape} is null
     * @throws IllegalArgumentException if a shape entry is negative, the byte size of the shape
     *     overflows a long or differs from {@code bytes}, {@code fileOffset} is negative, or
     *     {@code fileOffset + bytes} overflows a long
     */
    public Tensor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
        long expected = Shapes.byteSize(shape, dtype.itemSize());
        if (expected != bytes) {
            throw new IllegalArgumentException("tensor '" + name + "': " + dtype.safetensorsName()
                    + " shape " + Shapes.toPythonTuple(shape) + " needs " + expected
                    + " bytes, not " + bytes);
        }
        if (fileOffset < 0 || fileOffset > Long.MAX_VALUE - bytes) {
            throw new IllegalArgumentException("tensor '" + name + "': file offset " + fileOffset
                    + " with " + bytes + " bytes is out of range");
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
     * Returns the number of axes.
     *
     * @return {@code shape().length}; 0 for a scalar
     */
    public int ndim() {
        return shape.length;
    }

    /**
     * Returns the number of elements.
     *
     * @return {@code product(shape)}; 1 for a scalar (cannot overflow: the byte size fits a long)
     */
    public long elementCount() {
        return bytes / dtype.itemSize();
    }

    /**
     * Returns the tensor's bytes as a file range.
     *
     * @return {@code [fileOffset, fileOffset + bytes)}
     */
    public RecordExtent extent() {
        return new RecordExtent(fileOffset, bytes);
    }

    /**
     * Views the tensor as records along axis 0, like {@link dev.gdsloader.formats.npy.NpyShard}:
     * a tensor of shape {@code (N, d1, ..., dk)} is {@code N} records of shape
     * {@code (d1, ..., dk)} of {@code d1 * ... * dk * itemSize} bytes each, starting at
     * {@link #fileOffset()}.
     *
     * @param file the safetensors file the tensor belongs to, reported by
     *     {@link RecordLayout#file()}
     * @param fileSize the size of that file in bytes, reported by {@link RecordLayout#fileSize()}
     * @return an immutable, thread-safe layout
     * @throws FormatException if the tensor is 0-d (the message names the tensor: a scalar has
     *     no axis 0 to split into records); the offset is {@link #fileOffset()}
     * @throws IllegalArgumentException if the tensor does not lie within {@code fileSize} bytes
     */
    public RecordLayout asRecords(Path file, long fileSize) throws FormatException {
        if (shape.length == 0) {
            throw new FormatException(file, fileOffset, "a tensor with at least 1 dimension "
                    + "(records are rows along axis 0)", "tensor '" + name + "' of shape ()");
        }
        if (fileOffset + bytes > fileSize) {
            throw new IllegalArgumentException(file + ": tensor '" + name + "' at ["
                    + fileOffset + ", " + (fileOffset + bytes) + ") does not fit the file size "
                    + fileSize);
        }
        long[] recordShape = Arrays.copyOfRange(shape, 1, shape.length);
        // Cannot overflow: the product of the non-zero entries of the whole shape fits.
        long recordBytes = Shapes.byteSize(recordShape, dtype.itemSize());
        return new TensorRecords(file, this, recordShape, recordBytes, fileSize);
    }

    /**
     * Compares all components, the shape by content.
     *
     * @param o the other object
     * @return true if {@code o} is a {@code Tensor} with equal components
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof Tensor t && name.equals(t.name) && dtype == t.dtype
                && Arrays.equals(shape, t.shape) && fileOffset == t.fileOffset
                && bytes == t.bytes;
    }

    /**
     * Hashes all components, the shape by content.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), fileOffset, bytes);
    }

    /**
     * Describes the tensor.
     *
     * @return e.g. {@code "Tensor['w', F32 (2, 2), 16 bytes at 88]"}
     */
    @Override
    public String toString() {
        return "Tensor['" + name + "', " + dtype.safetensorsName() + " "
                + Shapes.toPythonTuple(shape) + ", " + bytes + " bytes at " + fileOffset + "]";
    }

    /** The records of one tensor: rows along axis 0. Immutable and thread-safe. */
    @SuppressWarnings("ArrayRecordComponent") // a private view, never compared or shared
    private record TensorRecords(Path file, Tensor tensor, long[] shapeOfRecord, long recordBytes,
            long fileSize) implements RecordLayout {

        @Override
        public DType dtype() {
            return tensor.dtype;
        }

        @Override
        public long[] recordShape() {
            return shapeOfRecord.clone();
        }

        @Override
        public long recordCount() {
            return tensor.shape[0];
        }

        @Override
        public long dataOffset() {
            return tensor.fileOffset;
        }

        @Override
        public String toString() {
            return "SafetensorsRecords[" + file + ", " + tensor + "]";
        }
    }
}
