package dev.gdsloader.formats.arrow;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Where one record batch of an Arrow IPC file lies, as its metadata gives it: the body's byte range in the file,
 * its rows, and per column its Arrow type, null count and buffers as (offset within the body, length) pairs, in
 * Arrow's buffer order for that type (Arrow columnar format, "Buffer layout", "IPC File Format" / "Encapsulated
 * message format"). Offsets and lengths are exactly the metadata's: no 8- or 64-byte padding is assumed (the spec
 * only recommends it, "Buffer alignment and padding"). For a compressed body (LZ4_FRAME, ZSTD) the extents are those
 * of the stored (compressed, length-prefixed) buffers.
 *
 * <p>Types covered: every fixed-width primitive (Int 8/16/32/64 signed and unsigned, FloatingPoint half/single/double),
 * Bool (a bitmap of values), FixedSizeBinary, FixedSizeList of a primitive or Bool (the child's validity and values
 * follow the list's validity), Binary, Utf8, LargeBinary and LargeUtf8 (validity, offsets of 4 or 8 bytes, values).
 * Built by {@link ArrowIpcFile#batchLayout(int)} (printed by {@code gdsloader inspect}); immutable and thread-safe.
 *
 * @param file the Arrow file
 * @param batch record batch index in the file
 * @param bodyOffset file offset of the body's first byte, bytes
 * @param bodyLength body length, bytes
 * @param rows rows of the batch
 * @param codec the body's compression: {@code NO_COMPRESSION}, {@code LZ4_FRAME} or {@code ZSTD}
 * @param columns the columns, in schema order (or in the order asked for)
 */
public record ArrowBatchLayout(Path file, int batch, long bodyOffset, long bodyLength, long rows,
                               CompressionUtil.CodecType codec, List<Column> columns) {
    /** @throws NullPointerException if an argument is null */
    public ArrowBatchLayout {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(codec, "codec");
        columns = List.copyOf(columns);
    }

    /** What a buffer holds, in Arrow's terms. */
    public enum Role {
        /** The column's validity bitmap, LSB-first; may be 0 bytes long when the null count is 0. */
        VALIDITY,
        /** Offsets into the values: {@code int32} (Binary, Utf8) or {@code int64} (LargeBinary, LargeUtf8), rows + 1. */
        OFFSETS,
        /** The values: fixed-width elements, a bitmap (Bool), or the concatenated bytes (Binary, Utf8). */
        VALUES,
        /** A FixedSizeList's child validity bitmap. */
        CHILD_VALIDITY,
        /** A FixedSizeList's child values ({@code length x listSize} elements). */
        CHILD_VALUES
    }

    /**
     * One buffer of a column.
     *
     * @param role what it holds
     * @param index the buffer's index in the record batch's buffer list
     * @param offset offset of its first byte from the start of the body, bytes
     * @param length its length as stored, bytes (for a compressed body: the 8-byte prefix and compressed bytes)
     */
    public record Buffer(Role role, int index, long offset, long length) {
    }

    /**
     * One top-level column of the batch.
     *
     * @param name column name
     * @param type its Arrow type
     * @param length its field node's length (the batch's rows)
     * @param nullCount its field node's null count
     * @param childType for a FixedSizeList the child's type, else {@code null}
     * @param childNullCount for a FixedSizeList the child node's null count, else 0
     * @param buffers its buffers in Arrow's order: VALIDITY, [OFFSETS], VALUES; for a FixedSizeList VALIDITY,
     *     CHILD_VALIDITY, CHILD_VALUES
     */
    public record Column(String name, ArrowType type, long length, long nullCount, ArrowType childType,
                         long childNullCount, List<Buffer> buffers) {
        /** Copies the buffers. */
        public Column {
            buffers = List.copyOf(buffers);
        }

        /**
         * Bytes a buffer needs for this column's length, from the type alone; unknown (-1) for the values of
         * Binary/Utf8 (they are given by the last offset).
         *
         * @param role a role of this column
         * @return bytes needed, before padding; -1 when only the offsets tell
         */
        public long neededBytes(Role role) {
            return switch (role) {
                case VALIDITY -> (length + 7) / 8;
                case CHILD_VALIDITY -> (childLength() + 7) / 8;
                case OFFSETS -> (length + 1) * offsetWidth(type);
                case VALUES -> type instanceof ArrowType.Bool ? (length + 7) / 8
                        : type instanceof ArrowType.FixedSizeBinary f ? length * f.getByteWidth()
                        : offsetWidth(type) > 0 ? -1 : length * (ArrowIpcFile.bitWidth(type) / 8);
                case CHILD_VALUES -> childType instanceof ArrowType.Bool ? (childLength() + 7) / 8
                        : childLength() * (ArrowIpcFile.bitWidth(childType) / 8);
            };
        }

        /** @return elements of a FixedSizeList's child ({@code length x listSize}); 0 for other types */
        public long childLength() {
            return type instanceof ArrowType.FixedSizeList l ? length * l.getListSize() : 0;
        }

        /**
         * @param t an Arrow type
         * @return bytes per offset: 4 for Binary/Utf8, 8 for LargeBinary/LargeUtf8, 0 for other types
         */
        public static int offsetWidth(ArrowType t) {
            return t instanceof ArrowType.Binary || t instanceof ArrowType.Utf8 ? 4
                    : t instanceof ArrowType.LargeBinary || t instanceof ArrowType.LargeUtf8 ? 8 : 0;
        }
    }

    /** @return whether the body is compressed (its buffers must be decoded on the host) */
    public boolean compressed() {
        return codec != CompressionUtil.CodecType.NO_COMPRESSION;
    }
}
