package dev.gdsloader.formats;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Element types of shard arrays, all stored little-endian.
 *
 * <p>The descr strings are those of the NumPy array-interface type strings written by
 * {@code numpy.lib.format} (NEP 1, "A Simple File Format for NumPy Arrays"): a byte-order
 * character ({@code '<'} little-endian, {@code '>'} big-endian, {@code '|'} not applicable,
 * {@code '='} native), a kind character ({@code b} bool, {@code i} signed integer, {@code u}
 * unsigned integer, {@code f} IEEE 754 float) and the item size in bytes.
 *
 * <p>Enum constants are immutable and thread-safe.
 */
public enum DType {
    /** NumPy {@code bool}: one byte, 0 or 1. Descr {@code '|b1'}. */
    BOOL(1, 'b'),
    /** Signed 8-bit integer. Descr {@code '|i1'}. */
    INT8(1, 'i'),
    /** Unsigned 8-bit integer. Descr {@code '|u1'}. */
    UINT8(1, 'u'),
    /** Signed 16-bit integer, little-endian. Descr {@code '<i2'}. */
    INT16(2, 'i'),
    /** Unsigned 16-bit integer, little-endian. Descr {@code '<u2'}. */
    UINT16(2, 'u'),
    /** Signed 32-bit integer, little-endian. Descr {@code '<i4'}. */
    INT32(4, 'i'),
    /** Unsigned 32-bit integer, little-endian. Descr {@code '<u4'}. */
    UINT32(4, 'u'),
    /** Signed 64-bit integer, little-endian. Descr {@code '<i8'}. */
    INT64(8, 'i'),
    /** Unsigned 64-bit integer, little-endian. Descr {@code '<u8'}. */
    UINT64(8, 'u'),
    /** IEEE 754 binary16 half-precision float, little-endian. Descr {@code '<f2'}. */
    FLOAT16(2, 'f'),
    /** IEEE 754 binary32 float, little-endian. Descr {@code '<f4'}. */
    FLOAT32(4, 'f'),
    /** IEEE 754 binary64 float, little-endian. Descr {@code '<f8'}. */
    FLOAT64(8, 'f');

    private final int itemSize;
    private final char kind;

    DType(int itemSize, char kind) {
        this.itemSize = itemSize;
        this.kind = kind;
    }

    /**
     * Returns the size of one element.
     *
     * @return item size in bytes (1, 2, 4 or 8)
     */
    public int itemSize() {
        return itemSize;
    }

    /**
     * Returns the little-endian NumPy descr, exactly as {@code numpy.lib.format} writes it.
     *
     * @return {@code '|'} + kind + size for 1-byte types (e.g. {@code "|u1"}), otherwise
     *     {@code '<'} + kind + size (e.g. {@code "<f4"})
     */
    public String numpyDescr() {
        return (itemSize == 1 ? "|" : "<") + kind + itemSize;
    }

    /**
     * Parses a NumPy descr string.
     *
     * <p>Accepted byte orders: {@code '<'} and {@code '|'}; {@code '='} (native, which is
     * little-endian on every platform this loader supports); no byte-order character (native, as
     * {@code numpy.dtype("f4")} accepts); and, for single-byte types only, any byte-order
     * character including {@code '>'}.
     *
     * @param descr the descr, e.g. {@code "<f4"}
     * @param file the file it was read from, for the exception message (may be {@code null})
     * @param offset byte offset of the descr in the file, for the exception message
     * @return the element type
     * @throws FormatException if the descr is big-endian with an item size above 1 (the message
     *     names the descr and suggests {@code arr.astype('<..')}), names an unsupported kind
     *     (object, byte or unicode string, void, structured, complex, datetime64, timedelta64;
     *     named in the message), or is not a recognised descr at all ("unknown dtype")
     */
    public static DType fromNumpyDescr(String descr, Path file, long offset) throws FormatException {
        if (descr == null) {
            throw new FormatException(file, offset, "a dtype descr string", "nothing");
        }
        String body = descr;
        char order = '=';
        if (!body.isEmpty() && "<>|=".indexOf(body.charAt(0)) >= 0) {
            order = body.charAt(0);
            body = body.substring(1);
        }
        String unsupported = unsupportedKind(descr, body);
        if (unsupported != null) {
            throw new FormatException(file, offset, unsupported + " '" + descr
                    + "' is not supported: only " + supportedList() + " are");
        }
        DType match = null;
        for (DType t : values()) {
            if (body.equals(String.valueOf(t.kind) + t.itemSize)) {
                match = t;
            }
        }
        if (match == null) {
            throw new FormatException(file, offset, "unknown dtype '" + descr
                    + "': only " + supportedList() + " are supported");
        }
        if (order == '>' && match.itemSize > 1) {
            throw new FormatException(file, offset, "big-endian dtype '" + descr
                    + "' is not supported: convert with arr.astype('" + match.numpyDescr() + "')");
        }
        return match;
    }

    /** Names the kind of a NumPy descr this module refuses on purpose, or null. */
    private static String unsupportedKind(String descr, String body) {
        if (descr.startsWith("[") || descr.startsWith("(") || descr.startsWith("{")) {
            return "structured dtype";
        }
        if (body.isEmpty()) {
            return null;
        }
        String rest = body.substring(1);
        if (!rest.isEmpty() && !Character.isDigit(rest.charAt(0)) && rest.charAt(0) != '[') {
            return null; // e.g. "float32": a name, not a descr; reported as unknown
        }
        return switch (body.charAt(0)) {
            case 'O' -> "object dtype";
            case 'S', 'a' -> "byte-string dtype";
            case 'U' -> "unicode string dtype";
            case 'V' -> "void (raw bytes or structured) dtype";
            case 'c' -> "complex dtype";
            case 'M' -> "datetime64 dtype";
            case 'm' -> "timedelta64 dtype";
            default -> null;
        };
    }

    private static String supportedList() {
        return Arrays.stream(values()).map(t -> "'" + t.numpyDescr() + "'")
                .collect(Collectors.joining(", "));
    }
}
