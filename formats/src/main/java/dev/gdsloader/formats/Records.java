package dev.gdsloader.formats;

import java.nio.file.Path;

/**
 * A run of {@code recordCount} fixed-size records stored contiguously from {@code dataOffset} in a file: the
 * general {@link RecordLayout}, for formats whose record runs are found in metadata (an Arrow record batch's
 * values buffer). Immutable and thread-safe.
 *
 * @param file the file
 * @param dtype element type
 * @param shape shape of one record (copied in and out)
 * @param recordCount records in the run
 * @param recordBytes bytes per record ({@code prod(shape) x itemSize})
 * @param dataOffset file offset of record 0, bytes
 * @param fileSize size of the file, bytes
 */
@SuppressWarnings("ArrayRecordComponent") // shape is copied in and out; never compared
public record Records(Path file, DType dtype, long[] shape, long recordCount, long recordBytes, long dataOffset, long fileSize)
        implements RecordLayout {
    /**
     * @throws IllegalArgumentException if a count, size or offset is negative, or the run ends past the file
     */
    public Records {
        shape = shape.clone();
        if (recordCount < 0 || recordBytes < 0 || dataOffset < 0
                || dataOffset > fileSize - Math.multiplyExact(recordCount, recordBytes)) {
            throw new IllegalArgumentException(file + ": " + recordCount + " records of " + recordBytes
                    + " bytes at offset " + dataOffset + " do not fit a file of " + fileSize + " bytes");
        }
    }

    @Override
    public long[] recordShape() {
        return shape.clone();
    }

    /** @return the record shape (a copy); the same as {@link #recordShape()} */
    @Override
    public long[] shape() {
        return shape.clone();
    }
}
