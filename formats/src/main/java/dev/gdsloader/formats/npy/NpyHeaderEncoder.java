package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.Shapes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Encodes {@code .npy} headers byte for byte as {@code numpy.lib.format} (NumPy 1.23 and later)
 * writes them for C-order arrays.
 *
 * <p>The dict is {@code "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"} (keys
 * sorted, each entry followed by {@code ", "}), followed by {@code 21 - len(repr(shape[0]))}
 * spaces of growth room when the array has at least one dimension
 * ({@code GROWTH_AXIS_MAX_DIGITS}), then padded with spaces and a final {@code '\n'} so that the
 * data starts at a multiple of {@value #ARRAY_ALIGN} bytes; when the alignment is already
 * reached NumPy still adds a full {@value #ARRAY_ALIGN} bytes of padding, and so does this class.
 * Version 1.0 is used unless the header length does not fit its 2-byte field, then 2.0.
 *
 * <p>Stateless and thread-safe.
 */
final class NpyHeaderEncoder {

    /** Data alignment of numpy.lib.format ({@code ARRAY_ALIGN}). */
    static final int ARRAY_ALIGN = 64;

    /** numpy.lib.format's {@code GROWTH_AXIS_MAX_DIGITS}. */
    static final int GROWTH_AXIS_MAX_DIGITS = 21;

    private NpyHeaderEncoder() {
    }

    /**
     * Encodes a complete header: magic, version, length field, dict, padding and newline.
     *
     * @param dtype element type
     * @param shape array shape, entries {@code >= 0}
     * @return the header bytes; their length is a multiple of {@value #ARRAY_ALIGN}
     * @throws IllegalArgumentException if the header does not fit version 2.0's 4-byte length
     */
    static byte[] encode(DType dtype, long[] shape) {
        return encode(dtype, shape, ARRAY_ALIGN);
    }

    /**
     * As {@link #encode(DType, long[])}, padding the header with spaces so the data starts at a multiple of
     * {@code align} bytes (a multiple of 64; NumPy reads any padding its length field covers). 4096 puts
     * every record of a 4 KiB multiple size on a block boundary, so {@code O_DIRECT} and cuFile read it
     * without an extra block.
     *
     * @param dtype element type
     * @param shape array shape
     * @param align data alignment in bytes, a positive multiple of 64
     * @return the header bytes
     */
    static byte[] encode(DType dtype, long[] shape, int align) {
        StringBuilder dict = new StringBuilder()
                .append("{'descr': '").append(dtype.numpyDescr()).append("', ")
                .append("'fortran_order': False, ")
                .append("'shape': ").append(Shapes.toPythonTuple(shape)).append(", }");
        if (shape.length > 0) {
            dict.repeat(' ', Math.max(0, GROWTH_AXIS_MAX_DIGITS - Long.toString(shape[0]).length()));
        }
        byte[] text = dict.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] v1 = wrap(text, 1, align);
        return v1 != null ? v1 : wrap(text, 2, align);
    }

    /** Returns the wrapped header for {@code major} version, or null if its length does not fit. */
    private static byte[] wrap(byte[] text, int major, int align) {
        int prefix = 8 + (major == 1 ? 2 : 4);
        long hlen = text.length + 1L;
        long padlen = align == ARRAY_ALIGN ? ARRAY_ALIGN - ((prefix + hlen) % ARRAY_ALIGN)
                : (align - (prefix + hlen) % align) % align;
        long headerLength = hlen + padlen;
        if ((major == 1 && headerLength > 0xFFFF) || headerLength > Integer.MAX_VALUE - prefix) {
            if (major == 1) {
                return null;
            }
            throw new IllegalArgumentException("npy header of " + headerLength + " bytes is too big");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) (prefix + headerLength))
                .order(ByteOrder.LITTLE_ENDIAN);
        buf.put(NpyHeader.MAGIC).put((byte) major).put((byte) 0);
        if (major == 1) {
            buf.putShort((short) headerLength);
        } else {
            buf.putInt((int) headerLength);
        }
        buf.put(text);
        while (buf.remaining() > 1) {
            buf.put((byte) ' ');
        }
        buf.put((byte) '\n');
        return buf.array();
    }
}
