package dev.gdsloader.formats.arrow;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.HostDecodedRecords;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.arrow.vector.compression.CompressionUtil;

/**
 * The values of one fixed-width column of one compressed Arrow record batch (LZ4_FRAME or ZSTD body): the
 * compressed values buffer is read from the file and decoded on the host ({@link ArrowBufferDecoder}). Offsets
 * and sizes of the {@link dev.gdsloader.formats.RecordLayout} view are those of the decoded values (see
 * {@link HostDecodedRecords}). Immutable and thread-safe; holds no open file.
 *
 * @param file the Arrow file
 * @param batch record batch index
 * @param buffer index of the values buffer in the batch's buffer list
 * @param codec the batch's compression codec
 * @param dtype element type
 * @param shape shape of one record (copied in and out)
 * @param recordCount rows
 * @param recordBytes bytes per row
 * @param storedOffset file offset of the compressed buffer (its 8-byte length prefix), bytes
 * @param storedBytes compressed buffer length including the prefix, bytes
 */
@SuppressWarnings("ArrayRecordComponent") // shape is copied in and out; never compared
public record CompressedArrowRecords(Path file, int batch, int buffer, CompressionUtil.CodecType codec, DType dtype,
                                     long[] shape, long recordCount, long recordBytes, long storedOffset, long storedBytes)
        implements HostDecodedRecords {
    /**
     * @throws IllegalArgumentException if the decoded values would not fit one Java array
     *     ({@link #MAX_DECODED_BYTES}) or a size is negative
     */
    public CompressedArrowRecords {
        shape = shape.clone();
        if (recordCount < 0 || recordBytes < 0 || storedBytes < 0 || storedBytes > MAX_DECODED_BYTES
                || Math.multiplyHigh(recordCount, recordBytes) != 0 || recordCount * recordBytes > MAX_DECODED_BYTES) {
            throw new IllegalArgumentException(file + ": record batch " + batch + ": " + recordCount + " rows of "
                    + recordBytes + " bytes (" + storedBytes + " stored) do not fit one host decode buffer of at most "
                    + MAX_DECODED_BYTES + " bytes");
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


    @Override
    public String decodeReason() {
        return "HOST-DECODE: " + file + " record batch " + batch + " is " + codec + "-compressed; decoded on the host";
    }

    @Override
    public byte[] decode() throws IOException {
        byte[] stored = new byte[(int) storedBytes];
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.wrap(stored);
            while (b.hasRemaining()) {
                if (ch.read(b, storedOffset + b.position()) < 0) {
                    throw new FormatException(file, storedOffset + b.position(), "buffer " + buffer + " of record batch "
                            + batch + ": " + storedBytes + " bytes from " + storedOffset, "end of file");
                }
            }
        }
        return ArrowBufferDecoder.decode(new ArrowBufferDecoder.Where(file, batch, buffer, storedOffset), stored, codec,
                recordCount * recordBytes);
    }
}
