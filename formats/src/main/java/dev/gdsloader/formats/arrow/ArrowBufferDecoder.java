package dev.gdsloader.formats.arrow;

import dev.gdsloader.formats.FormatException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;

/**
 * Decodes one compressed buffer of an Arrow IPC record batch with Arrow Java's own codecs
 * ({@code arrow-compression}: {@link CommonsCompressionFactory}, LZ4 frame through commons-compress, ZSTD through
 * zstd-jni).
 *
 * <p>Framing (Arrow columnar format, "Compression"): each compressed buffer starts with its uncompressed length
 * as an 8-byte little-endian signed integer; {@code -1} means the rest of the buffer is stored uncompressed; a
 * buffer of 0 bytes is empty. The declared length is checked against what the schema needs (rows x bytes per
 * record, plus at most {@link #MAX_PADDING} bytes of padding) before anything is allocated, so a corrupt length
 * gives a {@link FormatException}, never an {@code OutOfMemoryError}.
 *
 * <p>Stateless and thread-safe; each call uses its own bounded Arrow allocator and frees it before returning.
 */
final class ArrowBufferDecoder {
    /** Padding a writer may add after a buffer's values, bytes (Arrow recommends 64-byte padding). */
    static final long MAX_PADDING = 64;

    private ArrowBufferDecoder() {
    }

    /** Where a buffer is, for error messages: file, record batch, buffer index and the buffer's file offset. */
    record Where(Path file, int batch, int buffer, long offset) {
        String name() {
            return "buffer " + buffer + " of record batch " + batch;
        }
    }

    /**
     * @param at where the buffer lies
     * @param stored the buffer as stored in the file (prefix included); not modified
     * @param codec the record batch's codec
     * @param need the bytes the schema needs from this buffer: rows x bytes per record
     * @return a new array of {@code need} bytes: the first {@code need} bytes of the decoded buffer
     * @throws FormatException naming file, batch, buffer and offset, when the prefix is missing or declares a
     *     length outside {@code [need, need + MAX_PADDING]}, or the bytes do not decode to the declared length
     */
    static byte[] decode(Where at, byte[] stored, CompressionUtil.CodecType codec, long need) throws FormatException {
        if (stored.length == 0) {
            if (need != 0) {
                throw new FormatException(at.file(), at.offset(), at.name() + ": " + need + " bytes of values", "an empty buffer");
            }
            return new byte[0];
        }
        if (stored.length < CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH) {
            throw new FormatException(at.file(), at.offset(), at.name() + ": an 8-byte uncompressed length prefix",
                    stored.length + " bytes");
        }
        long declared = ByteBuffer.wrap(stored).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        int payload = stored.length - (int) CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH;
        if (declared == CompressionUtil.NO_COMPRESSION_LENGTH) {
            if (payload < need) {
                throw new FormatException(at.file(), at.offset() + 8, at.name() + " (stored uncompressed): " + need
                        + " bytes of values", payload + " bytes");
            }
            return java.util.Arrays.copyOfRange(stored, 8, 8 + (int) need);
        }
        if (declared < need || declared > need + MAX_PADDING) {
            throw new FormatException(at.file(), at.offset(), at.name() + ": an uncompressed length of " + need + " to "
                    + (need + MAX_PADDING) + " bytes (rows x bytes per record, plus padding) or -1 (stored uncompressed)",
                    declared + "");
        }
        if (declared == 0) {
            return new byte[0];
        }
        CompressionCodec c = CommonsCompressionFactory.INSTANCE.createCodec(codec);
        long limit = stored.length + 2 * declared + (1 << 20);
        try (BufferAllocator alloc = new RootAllocator(limit)) {
            ArrowBuf in = alloc.buffer(stored.length);
            try {
                in.setBytes(0, stored);
                in.writerIndex(stored.length);
                try (ArrowBuf out = c.decompress(alloc, in)) {
                    if (out.writerIndex() != declared) {
                        throw new FormatException(at.file(), at.offset(), at.name() + ": " + declared + " bytes after "
                                + codec + " decoding", out.writerIndex() + " bytes");
                    }
                    byte[] values = new byte[(int) need];
                    out.getBytes(0, values);
                    return values;
                }
            } catch (RuntimeException e) {
                throw new FormatException(at.file(), at.offset(), at.name() + ": " + payload + " bytes of " + codec
                        + " data declaring " + declared + " bytes", "bytes that do not decode as " + codec + " data", e);
            } finally {
                if (in.refCnt() > 0) {
                    in.close(); // the codec closes its input only when it decoded it
                }
            }
        }
    }
}
