package dev.gdsloader.formats;

import java.nio.file.Path;

/**
 * Where the records of a shard file lie, computed from the file's header alone.
 *
 * <p>A shard holds {@link #recordCount()} records of {@link #recordBytes()} bytes each, stored
 * contiguously starting at byte {@link #dataOffset()}: record {@code i} occupies bytes
 * {@code [dataOffset + i * recordBytes, dataOffset + (i + 1) * recordBytes)}. Each record is a
 * C-order (row-major) little-endian array of {@link #dtype()} with shape {@link #recordShape()}.
 *
 * <p>Implementations are immutable and thread-safe; they hold no open file (the loader opens and
 * closes the file itself) and guarantee
 * {@code dataOffset() + recordCount() * recordBytes() <= fileSize()} without overflow.
 */
public interface RecordLayout {

    /**
     * Returns the shard file.
     *
     * @return the path the layout was computed from
     */
    Path file();

    /**
     * Returns the element type of the records.
     *
     * @return the element type; elements are little-endian
     */
    DType dtype();

    /**
     * Returns the shape of one record, in elements.
     *
     * @return a fresh copy of the shape, e.g. {@code [28, 28]}; {@code []} when each record is a
     *     single scalar
     */
    long[] recordShape();

    /**
     * Returns the number of records in the shard.
     *
     * @return the record count, {@code >= 0}
     */
    long recordCount();

    /**
     * Returns the size of one record.
     *
     * @return {@code product(recordShape()) * dtype().itemSize()}, in bytes ({@code >= 0})
     */
    long recordBytes();

    /**
     * Returns where record 0 begins.
     *
     * @return byte offset from the start of the file
     */
    long dataOffset();

    /**
     * Returns the size of the file when the layout was computed.
     *
     * @return file size in bytes
     */
    long fileSize();

    /**
     * Returns the contiguous byte range holding records {@code [firstRecord, firstRecord + count)}.
     *
     * @param firstRecord index of the first record, {@code 0 <= firstRecord <= recordCount()}
     * @param count number of records, {@code >= 0}, with {@code firstRecord + count <= recordCount()}
     * @return the byte range; its length is {@code count * recordBytes()}
     * @throws IndexOutOfBoundsException if the records are not all in the shard; the message
     *     names the file, the first record, the count and the record count
     */
    default RecordExtent extent(long firstRecord, long count) {
        long total = recordCount();
        if (firstRecord < 0 || count < 0 || firstRecord > total || count > total - firstRecord) {
            throw new IndexOutOfBoundsException(file() + ": records [" + firstRecord + ", "
                    + firstRecord + " + " + count + ") (count " + count + ") are not within the "
                    + total + " records of the shard");
        }
        long bytes = recordBytes();
        // Cannot overflow: dataOffset + recordCount * recordBytes <= fileSize is guaranteed.
        return new RecordExtent(
                Math.addExact(dataOffset(), Math.multiplyExact(firstRecord, bytes)),
                Math.multiplyExact(count, bytes));
    }
}
