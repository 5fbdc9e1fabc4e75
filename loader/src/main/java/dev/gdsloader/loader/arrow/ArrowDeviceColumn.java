package dev.gdsloader.loader.arrow;

import dev.gdsloader.formats.arrow.ArrowBatchLayout;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * One column of the record batch an {@link ArrowBatchReader} has just read: the addresses of its buffers in device
 * memory (or host memory on the HOST path), as Arrow lays them out (Arrow columnar format, "Buffer layout").
 *
 * <p>Addresses are raw: valid until the reader reads the next batch or is closed ({@link ArrowBatch}); reading them
 * after that reads another batch's bytes or freed memory. An address is {@code buffer base + (body offset - aligned
 * start) + buffer offset} for a body read as stored, or the decoded buffer's place for a host-decoded (compressed)
 * body. Immutable.
 *
 * @param name column name
 * @param type Arrow type
 * @param childType for a FixedSizeList its child's type, else {@code null}
 * @param length elements (the batch's rows)
 * @param nullCount nulls among them
 * @param childNullCount for a FixedSizeList the nulls among the child's elements, else 0
 * @param validity the validity bitmap (LSB-first, bit i = row i valid); {@link Span#ABSENT} when the writer stored none
 *     (then the null count is 0)
 * @param offsets Binary/Utf8: {@code int32} offsets, LargeBinary/LargeUtf8: {@code int64}, {@code length + 1} of
 *     them (may be absent when {@code length} is 0); else {@link Span#ABSENT}
 * @param values the values: elements, a bitmap (Bool), FixedSizeBinary bytes, the concatenated bytes of a
 *     Binary/Utf8 column, or a FixedSizeList's child values
 * @param childValidity a FixedSizeList's child validity bitmap, else {@link Span#ABSENT}
 * @param onDevice whether the addresses are device addresses (GDS, BOUNCE) rather than host addresses (HOST)
 */
public record ArrowDeviceColumn(String name, ArrowType type, ArrowType childType, long length, long nullCount,
                                long childNullCount, Span validity, Span offsets, Span values, Span childValidity,
                                boolean onDevice) {
    /**
     * A buffer in memory.
     *
     * @param address its first byte's address (device or host); 0 when absent
     * @param bytes its length in bytes: the metadata's length for a body read as stored (padding included, as the
     *     writer stored it), the decoded length for a host-decoded body; 0 when absent
     */
    public record Span(long address, long bytes) {
        /** No buffer. */
        public static final Span ABSENT = new Span(0, 0);

        /** @return whether there is a buffer (an empty buffer stored by the writer counts as absent) */
        public boolean present() {
            return bytes > 0;
        }
    }

    /**
     * @param role a role of the layout
     * @return this column's buffer of that role ({@code CHILD_VALUES} is {@link #values()}), or {@link Span#ABSENT}
     */
    public Span span(ArrowBatchLayout.Role role) {
        return switch (role) {
            case VALIDITY -> validity;
            case OFFSETS -> offsets;
            case VALUES, CHILD_VALUES -> values;
            case CHILD_VALIDITY -> childValidity;
        };
    }
}
