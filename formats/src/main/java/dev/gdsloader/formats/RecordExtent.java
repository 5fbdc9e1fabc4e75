package dev.gdsloader.formats;

/**
 * A byte range {@code [offset, offset + length)} of a file.
 *
 * <p>Immutable and thread-safe.
 *
 * @param offset byte offset from the start of the file, {@code >= 0}
 * @param length number of bytes, {@code >= 0}; {@code offset + length} does not overflow a long
 */
public record RecordExtent(long offset, long length) {

    /**
     * Validates the range.
     *
     * @throws IllegalArgumentException if {@code offset} or {@code length} is negative, or if
     *     {@code offset + length} exceeds {@link Long#MAX_VALUE}
     */
    public RecordExtent {
        if (offset < 0) {
            throw new IllegalArgumentException("extent offset must be >= 0, got " + offset);
        }
        if (length < 0) {
            throw new IllegalArgumentException("extent length must be >= 0, got " + length);
        }
        if (offset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException(
                    "extent end overflows: offset " + offset + " + length " + length);
        }
    }

    /**
     * Returns the exclusive end of the range.
     *
     * @return {@code offset + length}, in bytes
     */
    public long end() {
        return offset + length;
    }
}
